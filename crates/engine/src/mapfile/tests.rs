//! Round trips of every format on random grids, the npy dtypes and orders numpy writes, and the
//! error of each kind of bad file.

use super::*;

/// A random grid from a simple xorshift (no dependency on the generator under test).
fn random_grid(rows: usize, cols: usize, mut s: u64) -> Grid {
    let mut g = Grid::new(rows, cols).unwrap();
    for y in 0..rows {
        for x in 0..cols {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            g.set(y, x, s & 1 == 1);
        }
    }
    g
}

fn err(format: Format, bytes: &[u8]) -> String {
    match decode(format, bytes) {
        Ok(g) => panic!(
            "{format}: read a {}x{} grid from a bad file",
            g.rows(),
            g.cols()
        ),
        Err(e) => e,
    }
}

#[test]
fn every_format_reads_back_what_it_wrote() {
    let recipe = cavesweep_core::presets::preset("classic-4-5").unwrap();
    let metrics = [("components", 3.0), ("path_length", f64::NAN)];
    for (k, (rows, cols)) in [(1, 1), (1, 70), (70, 1), (3, 64), (90, 140), (7, 129)]
        .into_iter()
        .enumerate()
    {
        let g = random_grid(rows, cols, 0x9e37_79b9_7f4a_7c15 ^ k as u64);
        let info = MapInfo {
            recipe: Some(&recipe),
            seed: Some(u64::MAX - 1),
            metrics: &metrics,
            spawn: Some((rows / 2, cols / 2)),
            exit: Some((0, 0)),
        };
        for f in Format::ALL {
            let bytes = encode(f, &g, &info);
            let back = decode(f, &bytes).unwrap_or_else(|e| panic!("{f} {rows}x{cols}: {e}"));
            assert_eq!(back, g, "{f} {rows}x{cols}");
            assert_eq!(encode(f, &g, &info), bytes, "{f}: the same bytes twice");
        }
    }
}

#[test]
fn formats_by_extension() {
    for f in Format::ALL {
        let p = PathBuf::from(format!("a/cave.{}", f.extension().to_uppercase()));
        assert_eq!(Format::of_path(&p).unwrap(), f);
    }
    let e = Format::of_path(Path::new("cave.bmp"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cave.bmp") && e.contains(".tmx"), "{e}");
    assert!(Format::of_path(Path::new("cave")).is_err());
    assert!(
        "xml"
            .parse::<Format>()
            .unwrap_err()
            .to_string()
            .contains("\"xml\"")
    );
}

/// A `.npy` file as numpy writes one: magic, version 1.0, padded header, data.
fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let f = if fortran { "True" } else { "False" };
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {shape}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn npy_reads_the_dtypes_and_orders_numpy_writes() {
    // The 2x3 grid "#.#" / "..#" in C order; Fortran order lists it column by column.
    let want = Grid::from_text("#.#\n..#\n").unwrap();
    let c = [1u8, 0, 1, 0, 0, 1];
    let fo = [1u8, 0, 0, 0, 1, 1];
    let widen = |v: &[u8], n: usize, big: bool, one: &[u8]| -> Vec<u8> {
        v.iter()
            .flat_map(|&b| {
                let mut e = if b == 1 { one.to_vec() } else { vec![0; n] };
                if big {
                    e.reverse();
                }
                e
            })
            .collect()
    };
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("|u1", c.to_vec(), false),
        ("|b1", c.to_vec(), false),
        ("|i1", fo.to_vec(), true),
        ("<i8", widen(&c, 8, false, &1i64.to_le_bytes()), false),
        (">i4", widen(&c, 4, true, &1i32.to_le_bytes()), false),
        ("<u2", widen(&fo, 2, false, &1u16.to_le_bytes()), true),
        ("<f8", widen(&c, 8, false, &1f64.to_le_bytes()), false),
        (">f4", widen(&c, 4, true, &1f32.to_le_bytes()), false),
        ("<f2", widen(&c, 2, false, &0x3c00u16.to_le_bytes()), false),
    ];
    for (descr, data, fortran) in cases {
        let g = decode(Format::Npy, &npy(descr, fortran, "(2, 3)", &data))
            .unwrap_or_else(|e| panic!("{descr}: {e}"));
        assert_eq!(g, want, "{descr} fortran={fortran}");
    }
}

#[test]
fn bad_files_say_where() {
    let cases: Vec<(Format, Vec<u8>, &str)> = vec![
        (Format::Txt, b"#.#\n#.\n".to_vec(), "line 2: has 2 cells, expected 3"),
        (Format::Txt, b"#.#\n#x#\n".to_vec(), "line 2, column 2: 'x' is not '#'"),
        (Format::Txt, b"\n\n".to_vec(), "holds no grid"),
        (Format::Txt, b"#.\n\n#.\n".to_vec(), "line 2: an empty line inside the grid"),
        (Format::Txt, b"#\xff\n".to_vec(), "not UTF-8"),
        (Format::Csv, b"0,1\n1\n".to_vec(), "line 2: has 1 values, expected 2"),
        (Format::Csv, b"0,1\n1,2\n".to_vec(), "line 2, value 2: \"2\" is not 0"),
        (Format::Npy, b"PK\x03\x04 zip".to_vec(), "not a numpy .npy file"),
        (Format::Npy, npy("<c16", false, "(1, 1)", &[0; 16]), "dtype \"<c16\""),
        (Format::Npy, npy("|u1", false, "(2, 2, 2)", &[0; 8]), "3 dimensions"),
        (Format::Npy, npy("|u1", false, "(2,)", &[0; 2]), "1 dimensions"),
        (Format::Npy, npy("|u1", false, "(2, 2)", &[0; 3]), "holds 3 bytes of array data, expected 4"),
        (Format::Npy, npy("|u1", false, "(1, 2)", &[0, 7]), "cell (0, 1) is 7"),
        (Format::Npy, npy("<f8", false, "(1, 1)", &0.5f64.to_le_bytes()), "cell (0, 0) is 0.5"),
        (Format::Npy, npy("|u1", false, "(0, 4)", &[]), "is empty"),
        (Format::Npy, npy("|u1", false, "(100000, 100000)", &[]), "too large"),
        (Format::Json, b"{\"cells\": [[0, 1], [1]]}".to_vec(), "cells[1] has 1 values, expected 2"),
        (Format::Json, b"{\"cells\": [[0, 3]]}".to_vec(), "cells[0][1] is \"3\""),
        (Format::Json, b"{\"rows\": 5, \"cells\": [[0, 1]]}".to_vec(), "\"rows\" is 5"),
        (Format::Json, b"[1, 2".to_vec(), "not JSON: line 1"),
        (Format::Tmj, b"{\"layers\": []}".to_vec(), "no tile layer"),
        (
            Format::Tmj,
            b"{\"layers\": [{\"type\": \"tilelayer\", \"width\": 2, \"height\": 1, \"data\": [1, 9]}]}"
                .to_vec(),
            "tile gid 9 at row 0, column 1",
        ),
        (
            Format::Tmx,
            b"<map><layer width=\"2\" height=\"1\"><data encoding=\"base64\">AAAA</data></layer></map>"
                .to_vec(),
            "base64-encoded",
        ),
        (Format::Tmx, b"<map><layer".to_vec(), "not XML"),
        (Format::Png, b"\x89PNG\r\n\x1a\nshort".to_vec(), "not a PNG picture"),
    ];
    for (f, bytes, want) in cases {
        let e = err(f, &bytes);
        assert!(e.contains(want), "{f}: {e:?} lacks {want:?}");
        assert!(!e.contains('\n'), "{f}: one line: {e:?}");
    }
}

/// A PNG of `w x h` RGBA pixels with no pixel data: only its header is read before refusing.
fn png_header(w: u32, h: u32) -> Vec<u8> {
    let chunk = |t: &[u8], d: &[u8]| {
        let mut c = (d.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(t);
        c.extend_from_slice(d);
        let mut crc = crc32fast::Hasher::new();
        crc.update(t);
        crc.update(d);
        c.extend_from_slice(&crc.finalize().to_be_bytes());
        c
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    // An empty zlib stream: the header is all there is.
    out.extend(chunk(
        b"IDAT",
        &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    ));
    out.extend(chunk(b"IEND", &[]));
    out
}

#[test]
fn huge_pictures_are_refused_before_their_pixels_are_allocated() {
    assert!(err(Format::Png, &png_header(60000, 30000)).contains("too large"));
    let e = err(Format::Png, &png_header(16000, 16000));
    assert!(e.contains("over 512 MiB") && e.contains(".npy"), "{e}");
}

#[test]
fn png_reads_dark_opaque_pixels_as_wall() {
    // An RGBA picture of 4 pixels: dark opaque, light opaque, dark transparent, mid grey.
    let px = [
        [10u8, 10, 10, 255],
        [250, 240, 200, 255],
        [0, 0, 0, 0],
        [127, 127, 127, 255],
    ];
    let mut buf = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut buf, 4, 1);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().unwrap();
        w.write_image_data(px.as_flattened()).unwrap();
    }
    let g = decode(Format::Png, &buf).unwrap();
    assert_eq!(g.to_text(), "#..#\n");
    // cavesweep's own cave pictures read back as their grid at one pixel per cell.
    let cave = random_grid(9, 13, 5);
    let marks = crate::render::Marks {
        spawn: None,
        exit: None,
        connectivity: cavesweep_core::measure::Connectivity::Four,
    };
    let pic = crate::render::png_bytes(&cave, 1, &marks).unwrap();
    assert_eq!(decode(Format::Png, &pic).unwrap(), cave);
}

/// An indexed picture is read through its palette, at every index width; a pixel naming an
/// entry past the palette's end is an error (the decoder drew it black: a WALL from nothing).
#[test]
fn palette_pictures_read_their_entries_and_refuse_missing_ones() {
    let indexed = |depth: png::BitDepth, width: u32, packed: &[u8]| {
        let mut buf = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut buf, width, 1);
            enc.set_color(png::ColorType::Indexed);
            enc.set_depth(depth);
            // Entry 0 black (WALL), entry 1 white (FLOOR).
            enc.set_palette(vec![0, 0, 0, 255, 255, 255]);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(packed).unwrap();
        }
        buf
    };
    // 1 bit: pixels 0 1 1 0 1 (0b01101000).
    let g = decode(Format::Png, &indexed(png::BitDepth::One, 5, &[0b0110_1000])).unwrap();
    assert_eq!(g.to_text(), "#..#.\n");
    // 4 bits: 1 0 1; 8 bits: 0 1.
    let g = decode(Format::Png, &indexed(png::BitDepth::Four, 3, &[0x10, 0x10])).unwrap();
    assert_eq!(g.to_text(), ".#.\n");
    let g = decode(Format::Png, &indexed(png::BitDepth::Eight, 2, &[0, 1])).unwrap();
    assert_eq!(g.to_text(), "#.\n");
    // Entry 5 of a palette of 2, at 8 and at 2 bits (entry 3).
    let e = err(Format::Png, &indexed(png::BitDepth::Eight, 3, &[1, 5, 0]));
    assert!(
        e.contains("column 1 is palette entry 5, but the palette has 2"),
        "{e}"
    );
    let e = err(Format::Png, &indexed(png::BitDepth::Two, 4, &[0b0001_1100]));
    assert!(e.contains("column 2 is palette entry 3"), "{e}");
}

#[test]
fn files_put_the_tileset_picture_beside_a_tiled_map() {
    let g = random_grid(3, 4, 1);
    let f = files(Path::new("out/a.tmx"), &g, &MapInfo::default()).unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!(f[1].0, Path::new("out").join(TILES_PNG));
    assert_eq!(
        files(Path::new("a.npy"), &g, &MapInfo::default())
            .unwrap()
            .len(),
        1
    );
}
