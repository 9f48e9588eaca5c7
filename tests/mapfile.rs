//! `run --from` and `run --save`, end to end through the real binary: every format read back
//! gives the saved grid, a start grid is smoothed as the recipe's own fill would be, refusals
//! and bad files are one-line errors, and Tiled's own renderer (`tmxrasterizer`, Debian's
//! `tiled`, installed by `.ci/run`) draws an exported map cell for cell as cavesweep does.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use cavesweep::mapfile::{Format, TILES_PNG};
use common::{assert_one_line_error, run, scratch, stderr};

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    common::stdout(&o)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_saved_format_reads_back_as_the_same_grid() {
    let d = scratch("mapfile-roundtrip");
    for preset in ["classic-4-5", "nethack-mines"] {
        let txt = d.join(format!("{preset}.txt"));
        let mut args = vec!["run", "--preset", preset, "--seed", "31575", "--save"];
        args.push(path(&txt));
        let files: Vec<_> = Format::ALL
            .iter()
            .map(|f| d.join(format!("{preset}-cave.{f}")))
            .collect();
        for f in &files {
            args.push("--save");
            args.push(path(f));
        }
        ok(&args);
        let want = fs::read(&txt).unwrap();
        for f in &files {
            // Zero steps and no post-steps: the cave is the start grid, saved as text.
            let back = d.join("back.txt");
            ok(&[
                "run",
                "--preset",
                "classic-4-5",
                "--set",
                "steps=0",
                "--from",
                path(f),
                "--save",
                path(&back),
                "--force",
            ]);
            assert_eq!(fs::read(&back).unwrap(), want, "{}", f.display());
        }
        assert!(d.join(TILES_PNG).is_file());
    }
}

#[test]
fn a_start_grid_is_smoothed_as_the_fill_would_be() {
    let d = scratch("mapfile-from");
    for preset in [
        "chapter-strict",
        "classic-4-5",
        "nethack-mines",
        "roguebasin",
    ] {
        // The fill alone (every pass applied 0 times, no post-steps) saved, then the recipe
        // run from it: the same cave as the recipe's own run of the seed.
        let start = d.join(format!("{preset}-start.npy"));
        let mut recipe = cavesweep::presets::preset(preset).unwrap();
        for p in &mut recipe.passes {
            p.repeat = 0;
        }
        recipe.post.clear();
        let toml = d.join(format!("{preset}-fill.toml"));
        fs::write(&toml, recipe.to_toml()).unwrap();
        ok(&[
            "run",
            "--recipe",
            path(&toml),
            "--seed",
            "7",
            "--save",
            path(&start),
            "--force",
        ]);
        let direct = d.join(format!("{preset}-direct.txt"));
        let from = d.join(format!("{preset}-from.txt"));
        let out_direct = ok(&[
            "run",
            "--preset",
            preset,
            "--seed",
            "7",
            "--save",
            path(&direct),
            "--force",
        ]);
        let out_from = ok(&[
            "run",
            "--preset",
            preset,
            "--seed",
            "7",
            "--from",
            path(&start),
            "--save",
            path(&from),
            "--force",
        ]);
        assert_eq!(
            fs::read(&direct).unwrap(),
            fs::read(&from).unwrap(),
            "{preset}"
        );
        // The same trajectory and metrics (the heading and first line say where the start
        // grid came from).
        let tail = |s: &str| s.lines().skip(3).collect::<Vec<_>>().join("\n");
        assert_eq!(tail(&out_direct), tail(&out_from), "{preset}");
        assert!(
            out_from.contains(" from ") && out_from.contains("start grid"),
            "{out_from}"
        );
    }
}

#[test]
fn bad_start_grids_and_refused_saves_are_one_line_errors() {
    let d = scratch("mapfile-errors");
    let write = |name: &str, bytes: &[u8]| {
        let p = d.join(name);
        fs::write(&p, bytes).unwrap();
        p
    };
    let cases = [
        (
            write("ragged.txt", b"#.#\n#.\n"),
            "line 2: has 2 cells, expected 3",
        ),
        (write("char.txt", b"#.#\n#?#\n"), "line 2, column 2"),
        (write("empty.csv", b""), "holds no grid"),
        (write("bad.csv", b"0,1\n0,x\n"), "line 2, value 2"),
        (write("bad.npy", b"not numpy"), "not a numpy .npy file"),
        (write("cave.bmp", b"BM"), "cannot tell the map format"),
    ];
    for (p, needle) in &cases {
        let o = run(&["run", "--from", path(p)]);
        assert_one_line_error(&o, needle);
        assert!(stderr(&o).contains("--from"), "{}", stderr(&o));
    }
    // A FIFO is refused at once, not waited on.
    let fifo = d.join("fifo.txt");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let child = common::bin()
        .args(["run", "--from", path(&fifo)])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = common::wait_within(child, std::time::Duration::from_secs(20), "--from a FIFO");
    assert_one_line_error(&o, "FIFO");
    // A start grid smaller than the recipe's spawn.
    let tiny = write("tiny.txt", b"..\n..\n");
    let o = run(&["run", "--from", path(&tiny), "--set", "spawn=5,5"]);
    assert_one_line_error(&o, "start grid's size 2x2");
    // --set rows that contradicts the start grid.
    let o = run(&["run", "--from", path(&tiny), "--set", "rows=9"]);
    assert_one_line_error(&o, "differs from the start grid's rows");
    // A file that holds something else is not replaced without --force; nothing is written.
    let other = write("taken.npy", b"mine");
    let also = d.join("new.txt");
    let o = run(&["run", "--save", path(&also), "--save", path(&other)]);
    assert_one_line_error(&o, "--force");
    assert_eq!(fs::read(&other).unwrap(), b"mine");
    assert!(!also.exists(), "a refused --save writes nothing");
    ok(&[
        "run",
        "--save",
        path(&also),
        "--save",
        path(&other),
        "--force",
    ]);
    assert_ne!(fs::read(&other).unwrap(), b"mine");
    // A link where the file would go is never written through.
    let target = write("target.txt", b"keep");
    let link = d.join("link.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = run(&["run", "--save", path(&link), "--force"]);
    assert_one_line_error(&o, "symbolic link");
    assert_eq!(fs::read(&target).unwrap(), b"keep");
    // An unknown extension is refused before any work.
    let o = run(&["run", "--save", path(&d.join("cave.gif"))]);
    assert_one_line_error(&o, "cannot tell the map format");
}

#[test]
fn one_path_for_two_files_or_an_unwritable_one_writes_nothing() {
    let d = scratch("mapfile-all-or-none");
    let p = |name: &str| d.join(name);
    // --png and --save on one path: two different files, refused (before, the --save bytes
    // silently replaced the picture and a rerun failed).
    let o = run(&[
        "run",
        "--png",
        path(&p("c.png")),
        "--save",
        path(&p("./c.png")),
    ]);
    assert_one_line_error(&o, "named for two different files");
    assert!(!p("c.png").exists());
    // A cave picture saved under the tileset's name beside a Tiled map, in either order.
    for saves in [["a.tmx", TILES_PNG], [TILES_PNG, "a.tmx"]] {
        let o = run(&[
            "run",
            "--save",
            path(&p(saves[0])),
            "--save",
            path(&p(saves[1])),
        ]);
        assert_one_line_error(&o, "named for two different files");
        assert!(!p("a.tmx").exists() && !p(TILES_PNG).exists());
    }
    // The same file twice is one file (and two maps share one tileset).
    ok(&[
        "run",
        "--save",
        path(&p("b.npy")),
        "--save",
        path(&p("b.npy")),
        "--save",
        path(&p("b.tmx")),
        "--save",
        path(&p("b2.tmj")),
    ]);
    assert!(p("b.npy").is_file() && p(TILES_PNG).is_file());
    // A later file whose folder is missing: the earlier ones are not written either.
    let o = run(&[
        "run",
        "--png",
        path(&p("early.png")),
        "--save",
        path(&p("early.npy")),
        "--save",
        path(&p("nodir/x.txt")),
    ]);
    assert_one_line_error(&o, "nodir/x.txt");
    assert!(!p("early.png").exists() && !p("early.npy").exists());
    let left: Vec<_> = fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn malformed_tiled_gids_and_png_errors_are_named() {
    let d = scratch("mapfile-bad-tiled");
    let write = |name: &str, bytes: &str| {
        let p = d.join(name);
        fs::write(&p, bytes).unwrap();
        p
    };
    let tmx = |tileset: &str, tiles: &str| {
        format!(
            "<?xml version=\"1.0\"?>\n<map width=\"2\" height=\"1\">{tileset}\
             <layer width=\"2\" height=\"1\"><data>{tiles}</data></layer></map>\n"
        )
    };
    let ts = "<tileset firstgid=\"1\"/>";
    let cases = [
        (
            write("x.tmx", &tmx(ts, "<tile gid=\"2\"/><tile gid=\"x\"/>")),
            "tile \"x\" is not a gid",
        ),
        (
            write(
                "big.tmx",
                &tmx(ts, "<tile gid=\"2\"/><tile gid=\"4294967298\"/>"),
            ),
            "not a Tiled gid",
        ),
        (
            write(
                "first.tmx",
                &tmx(
                    "<tileset firstgid=\"18446744073709551615\"/>",
                    "<tile/><tile/>",
                ),
            ),
            "firstgid 18446744073709551615 is not a tile id",
        ),
        (
            write(
                "first.tmj",
                "{\"width\":1,\"height\":1,\"tilesets\":[{\"firstgid\":\"one\"}],\
                 \"layers\":[{\"type\":\"tilelayer\",\"data\":[1]}]}",
            ),
            "firstgid is not a number",
        ),
    ];
    for (p, needle) in &cases {
        let o = run(&["run", "--set", "steps=0", "--from", path(p)]);
        assert_one_line_error(&o, needle);
    }
    // A `<tile/>` without a gid is an empty cell, as Tiled writes it.
    let empty = write("empty.tmx", &tmx(ts, "<tile/><tile gid=\"2\"/>"));
    let back = d.join("empty-back.txt");
    ok(&[
        "run",
        "--set",
        "steps=0",
        "--from",
        path(&empty),
        "--save",
        path(&back),
    ]);
    assert_eq!(fs::read_to_string(&back).unwrap(), ".#\n");
    // A PNG with a damaged header: the error names the chunk as PNG does (`IHDR`), not as
    // Rust's debug form of the decoder's type.
    let good = d.join("good.png");
    ok(&["run", "--save", path(&good)]);
    let mut bytes = fs::read(&good).unwrap();
    bytes[29] ^= 0xff; // inside IHDR's CRC
    let bad = d.join("bad-crc.png");
    fs::write(&bad, &bytes).unwrap();
    let o = run(&["run", "--from", path(&bad)]);
    assert_one_line_error(&o, "IHDR");
    assert!(!stderr(&o).contains("ChunkType"), "{}", stderr(&o));
}

/// Pixels of a PNG as RGB triples, row-major, with its width.
fn pixels(p: &Path) -> (usize, Vec<[u8; 3]>) {
    let dec = png::Decoder::new(std::io::BufReader::new(fs::File::open(p).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let px = buf[..info.buffer_size()]
        .chunks(ch)
        .map(|c| {
            if ch >= 3 {
                [c[0], c[1], c[2]]
            } else {
                [c[0]; 3]
            }
        })
        .collect();
    (info.width as usize, px)
}

#[test]
fn tiled_renders_the_exported_map_as_cavesweep_draws_it() {
    let Some(tmxr) = which("tmxrasterizer") else {
        assert!(
            std::env::var_os("CAVESWEEP_SKIP_TILED").is_some(),
            "tmxrasterizer (Debian package `tiled`) is not installed: .ci/run installs it; set \
             CAVESWEEP_SKIP_TILED=1 to skip this test"
        );
        eprintln!("SKIPPED: tmxrasterizer is not installed");
        return;
    };
    let d = scratch("mapfile-tiled");
    for (preset, seed) in [("classic-4-5", "31575"), ("nethack-mines", "3")] {
        let grid = d.join(format!("{preset}.txt"));
        let pic = d.join(format!("{preset}-picture.png"));
        let mut args = vec![
            "run",
            "--preset",
            preset,
            "--seed",
            seed,
            "--png",
            path(&pic),
        ];
        args.extend(["--scale", "1", "--save", path(&grid)]);
        let maps: Vec<_> = ["tmx", "tmj"]
            .iter()
            .map(|e| d.join(format!("{preset}.{e}")))
            .collect();
        for m in &maps {
            args.extend(["--save", path(m)]);
        }
        ok(&args);
        let text = fs::read_to_string(&grid).unwrap();
        let (_, ours) = pixels(&pic);
        for m in &maps {
            let out = d.join(format!(
                "{}.rendered.png",
                m.file_name().unwrap().to_string_lossy()
            ));
            // One pixel per tile, markers hidden: each pixel is one cell's tile.
            let st = Command::new(&tmxr)
                .env("QT_QPA_PLATFORM", "offscreen")
                .args([
                    "--tilesize",
                    "1",
                    "--no-smoothing",
                    "--hide-layer",
                    "markers",
                ])
                .arg(m)
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                st.status.success(),
                "tmxrasterizer {}: {}",
                m.display(),
                stderr(&st)
            );
            let (w, px) = pixels(&out);
            let cols = text.lines().next().unwrap().len();
            assert_eq!(w, cols, "{}", m.display());
            let cells: Vec<bool> = text
                .lines()
                .flat_map(|l| l.bytes().map(|b| b == b'#'))
                .collect();
            assert_eq!(px.len(), cells.len(), "{}", m.display());
            let mut compared = 0;
            for (i, (&p, &wall)) in px.iter().zip(&cells).enumerate() {
                let want = if wall {
                    cavesweep::render::WALL
                } else {
                    cavesweep::render::FLOOR
                };
                assert_eq!(p, want, "{} cell {}: Tiled drew {p:?}", m.display(), i);
                // cavesweep's picture: the same cell is wall or one of the floor colours
                // (the spawn's ring and the exit's diamond cover a few cells).
                let o = ours[i];
                let marker =
                    o == cavesweep::render::SPAWN || o == cavesweep::render::EXIT || o == [0, 0, 0];
                if !marker {
                    assert_eq!(
                        o == cavesweep::render::WALL,
                        wall,
                        "{} cell {i}",
                        m.display()
                    );
                    compared += 1;
                }
            }
            assert!(
                compared > cells.len() * 9 / 10,
                "{compared} of {}",
                cells.len()
            );
        }
    }
}

fn which(cmd: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(cmd))
            .find(|p| p.is_file())
    })
}

#[test]
fn search_saves_each_match_the_same_whichever_run_writes_it() {
    let d = scratch("mapfile-search");
    let (all, limit) = (d.join("all"), d.join("limit"));
    let base = [
        "search",
        "--preset",
        "nethack-mines",
        "--seeds",
        "0..300",
        "--where",
        "components<=1",
        "--save-format",
        "tmx,npy,json,npy",
        "--threads",
        "2",
    ];
    // Every match (files written as chunks finish) and the first five (written at the end).
    let mut a = base.to_vec();
    a.extend(["--save-dir", path(&all)]);
    let rows = ok(&a);
    let seeds: Vec<&str> = rows
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert!(seeds.len() >= 5, "{rows}");
    let mut b = base.to_vec();
    b.extend(["--save-dir", path(&limit), "--limit", "5"]);
    ok(&b);
    let names = |dir: &Path| {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&all).len(), 3 * seeds.len() + 1, "{:?}", names(&all));
    assert_eq!(names(&limit).len(), 3 * 5 + 1);
    for seed in &seeds[..5] {
        for ext in ["tmx", "npy", "json"] {
            let f = format!("{seed}.{ext}");
            assert_eq!(
                fs::read(all.join(&f)).unwrap(),
                fs::read(limit.join(&f)).unwrap(),
                "{f}"
            );
        }
        // The saved cave is the seed's cave.
        let (x, y) = (d.join("x.txt"), d.join("y.txt"));
        ok(&[
            "run",
            "--preset",
            "nethack-mines",
            "--seed",
            seed,
            "--save",
            path(&x),
            "--force",
        ]);
        let npy = all.join(format!("{seed}.npy"));
        ok(&[
            "run",
            "--from",
            path(&npy),
            "--set",
            "steps=0",
            "--save",
            path(&y),
            "--force",
        ]);
        assert_eq!(fs::read(&x).unwrap(), fs::read(&y).unwrap(), "seed {seed}");
    }
    // A resumed search with --out makes the files a match lacks, and only those.
    let out = d.join("m.csv");
    let mut c = base.to_vec();
    c.extend([
        "--save-dir",
        path(&limit),
        "--limit",
        "5",
        "--out",
        path(&out),
    ]);
    ok(&c);
    let gone = limit.join(format!("{}.json", seeds[2]));
    let want = fs::read(&gone).unwrap();
    fs::remove_file(&gone).unwrap();
    ok(&c);
    assert_eq!(fs::read(&gone).unwrap(), want);
    // A file that holds something else is refused without --force.
    fs::write(&gone, b"mine").unwrap();
    let mut e = base.to_vec();
    e.extend(["--save-dir", path(&limit), "--limit", "5"]);
    assert_one_line_error(&run(&e), "--force");
    assert_eq!(fs::read(&gone).unwrap(), b"mine");
    let o = run(&[
        "search",
        "--seeds",
        "0..9",
        "--where",
        "components>0",
        "--save-dir",
        path(&d),
        "--save-format",
        "gif",
    ]);
    assert_one_line_error(&o, "unknown map format \"gif\"");
}
