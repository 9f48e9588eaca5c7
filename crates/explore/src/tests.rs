//! API tests over real HTTP: a server bound on a free loopback port in this process, and
//! requests written by hand on a TCP socket (so the Host and Origin headers are exactly what
//! a test says, which an HTTP client library would not allow).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;

struct Running {
    port: u16,
    token: String,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn start(sweep: Option<PathBuf>) -> Running {
    let server = Server::bind(&Options {
        bind: "127.0.0.1".parse().unwrap(),
        port: 0,
        sweep,
        threads: 1,
        header_timeout: Duration::from_secs(1),
    })
    .unwrap();
    let url = server.url().to_string();
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let token = url.split("token=").nth(1).unwrap().to_string();
    assert_eq!(token.len(), 32, "{url}");
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let thread = std::thread::spawn(move || server.serve(s).unwrap());
    Running {
        port,
        token,
        stop,
        thread: Some(thread),
    }
}

/// A response: status, headers (lower-case names) and body.
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request with `Connection: close`; `host` None sends no Host header.
fn raw(
    port: u16,
    method: &str,
    path: &str,
    host: Option<&str>,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    if let Some(h) = host {
        req.push_str(&format!("Host: {h}\r\n"));
    }
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8(buf[..split].to_vec()).unwrap();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = buf[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v == "chunked")
    {
        body = dechunk(&body);
    }
    Resp {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..eol]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + n]);
        b = &b[eol + 2 + n + 2..];
    }
}

impl Running {
    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
    fn get(&self, path: &str) -> Resp {
        let h = self.host();
        raw(
            self.port,
            "GET",
            path,
            Some(&h),
            &[("X-Cavesweep-Token", &self.token)],
            b"",
        )
    }
    fn post(&self, path: &str, body: Value) -> Resp {
        let h = self.host();
        raw(
            self.port,
            "POST",
            path,
            Some(&h),
            &[
                ("X-Cavesweep-Token", &self.token),
                ("Content-Type", "application/json"),
            ],
            body.to_string().as_bytes(),
        )
    }
}

#[test]
fn host_token_and_origin_are_checked_before_anything() {
    let s = start(None);
    let h = s.host();
    let t = s.token.clone();
    let ok = &[("X-Cavesweep-Token", t.as_str())];
    // Good: the header, or the query parameter; localhost names the same server.
    assert_eq!(s.get("/api/info").status, 200);
    assert_eq!(
        raw(s.port, "GET", &format!("/?token={t}"), Some(&h), &[], b"").status,
        200
    );
    let lh = format!("localhost:{}", s.port);
    assert_eq!(
        raw(s.port, "GET", "/api/info", Some(&lh), ok, b"").status,
        200
    );
    // Host: missing, another site (DNS rebinding), another port.
    for host in [
        None,
        Some("evil.example:80".to_string()),
        Some(format!("127.0.0.1:{}", s.port + 1)),
    ] {
        let r = raw(s.port, "GET", "/api/info", host.as_deref(), ok, b"");
        assert_eq!(r.status, 403, "{host:?}");
        assert!(r.json()["error"].as_str().unwrap().contains("Host"));
    }
    // Token: missing, wrong, one character short; the page itself too.
    let short = &t[..31];
    for bad in [None, Some("0".repeat(32)), Some(short.to_string())] {
        let hdr: Vec<(&str, &str)> = bad
            .iter()
            .map(|b| ("X-Cavesweep-Token", b.as_str()))
            .collect();
        for path in ["/", "/api/info", "/api/sweep"] {
            let r = raw(s.port, "GET", path, Some(&h), &hdr, b"");
            assert_eq!(r.status, 403, "{path} {bad:?}");
        }
    }
    let r = raw(s.port, "POST", "/api/cave", Some(&h), &[], br#"{"seed":1}"#);
    assert_eq!(r.status, 403);
    // Another site's page, even with the token.
    let r = raw(
        s.port,
        "GET",
        "/api/info",
        Some(&h),
        &[("X-Cavesweep-Token", &t), ("Origin", "http://evil.example")],
        b"",
    );
    assert_eq!(r.status, 403);
    let own = format!("http://{h}");
    let r = raw(
        s.port,
        "GET",
        "/api/info",
        Some(&h),
        &[("X-Cavesweep-Token", &t), ("Origin", &own)],
        b"",
    );
    assert_eq!(r.status, 200);
    // The script and style need only the Host; they come with the page's policy headers.
    let r = raw(s.port, "GET", "/app.js", Some(&h), &[], b"");
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-security-policy")
            .unwrap()
            .contains("script-src 'self'")
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(
        raw(s.port, "GET", "/app.js", Some("evil.example"), &[], b"").status,
        403
    );
    // No path names a file.
    for path in [
        "/../Cargo.toml",
        "/static/app.js",
        "/api/../../etc/passwd",
        "/etc/passwd",
    ] {
        assert_eq!(s.get(path).status, 404, "{path}");
    }
}

#[test]
fn a_client_that_sends_no_headers_is_dropped() {
    let s = start(None);
    // Half a request line, then nothing: closed after the header time limit (1 s here).
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(b"GET /api/info HTTP/1.1\r\nHost: ").unwrap();
    let t = std::time::Instant::now();
    let mut buf = Vec::new();
    let _ = c.read_to_end(&mut buf);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "still open after {:?}",
        t.elapsed()
    );
    // More connections than the cap wait, then are served once others close.
    let idle: Vec<TcpStream> = (0..MAX_CONNECTIONS)
        .map(|_| TcpStream::connect(("127.0.0.1", s.port)).unwrap())
        .collect();
    let t = std::time::Instant::now();
    assert_eq!(s.get("/api/info").status, 200);
    assert!(t.elapsed() < Duration::from_secs(10));
    drop(idle);
}

/// The in-place work limit counts every thumbnail of a sheet, and leaves Moore rules in place
/// and buffered passes alone.
#[test]
fn in_place_work_is_bounded_per_request() {
    let s = start(None);
    // 128x128, 16 steps of a radius-5 box in place: 121 reads a cell, 3.2e7 a cave.
    let set = json!({"rows": "128", "cols": "128", "steps": "16",
        "rule": "R5,C0,M1,S34..58,B34..45,NM", "update": "inplace-row-major"});
    let ok = s.post("/api/thumbs", json!({"set": set, "count": 9}));
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    let r = s.post("/api/thumbs", json!({"set": set, "count": 10}));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["key"], "update", "{}", r.json());
    for (rule, update) in [
        ("B5678/S45678", "inplace-row-major"),
        ("R15,C0,M1,S34..58,B34..45,NM", "sync"),
    ] {
        let set = json!({"rows": "1024", "cols": "1024", "steps": "200", "rule": rule,
            "update": update});
        let r = s.post("/api/cave", json!({"set": set, "scale": 1}));
        assert_eq!(
            r.status,
            200,
            "{rule} {update}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
}

/// A known path asked with the wrong method: `405` with the usual JSON error body.
#[test]
fn a_wrong_method_is_405_with_a_json_error() {
    let s = start(None);
    let h = s.host();
    for (method, path) in [("GET", "/api/cave"), ("DELETE", "/api/info")] {
        let r = raw(
            s.port,
            method,
            path,
            Some(&h),
            &[("X-Cavesweep-Token", &s.token)],
            b"",
        );
        assert_eq!(r.status, 405, "{method} {path}");
        let v = r.json();
        assert!(
            v["error"].as_str().unwrap().contains(method),
            "{method} {path}: {v}"
        );
    }
}

/// A client that sends its headers and then only part of its body gets `408` once the time
/// limit (1 s here, as for headers) has passed, and its connection is closed: before, it was
/// waited on forever, holding one of the server's connections.
#[test]
fn a_body_that_stops_halfway_is_408() {
    let s = start(None);
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "POST /api/cave HTTP/1.1\r\nHost: {}\r\nX-Cavesweep-Token: {}\r\n\
         Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{{\"preset\"",
        s.host(),
        s.token
    );
    c.write_all(head.as_bytes()).unwrap();
    let t = std::time::Instant::now();
    let mut buf = Vec::new();
    let _ = c.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("within 1 s"), "{text}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn info_lists_presets_keys_metrics_and_limits() {
    let s = start(None);
    let v = s.get("/api/info").json();
    assert_eq!(
        v["presets"].as_array().unwrap().len(),
        cavesweep_core::presets::NAMES.len()
    );
    assert_eq!(v["presets"][1]["values"]["rule"], "B5678/S45678");
    assert_eq!(
        v["keys"].as_array().unwrap().len(),
        cavesweep_core::recipe::KEYS.len()
    );
    assert_eq!(v["limits"]["max_thumbs"], 16);
    assert!(v["sweep"].is_null());
    assert_eq!(s.get("/api/sweep").status, 404);
}

#[test]
fn a_cave_is_the_library_cave_and_its_picture_the_run_png() {
    let s = start(None);
    let r = s.post(
        "/api/cave",
        json!({"preset": "classic-4-5", "set": {"fill": "0.47", "steps": "6"}, "seed": 42, "frames": true, "frame_scale": 6}),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    let mut recipe = cavesweep_core::presets::preset("classic-4-5").unwrap();
    recipe.set_many([("fill", "0.47"), ("steps", "6")]).unwrap();
    let mut g =
        cavesweep_core::generate::Generator::new(&recipe, cavesweep_core::measure::MetricSet::ALL)
            .unwrap();
    let cave = g.run(42).unwrap();
    let want = cavesweep_engine::render::png_bytes(
        cave.grid,
        6,
        &cavesweep_engine::render::Marks::of(&recipe),
    )
    .unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(v["png"].as_str().unwrap())
        .unwrap();
    assert_eq!(png, want);
    assert_eq!(
        v["metrics"]["components"],
        cave.values[cavesweep_core::measure::Metric::Components.index()]
    );
    assert_eq!(
        v["trajectory"].as_array().unwrap().len(),
        cave.trajectory.len()
    );
    // Frames: the fill, six steps; the last is the cave.
    let frames = v["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 7);
    assert_eq!(frames[0]["label"], "fill");
    // Frames are previews (faster compression): the same pixels as the cave's picture.
    assert_eq!(
        pixels(frames[6]["png"].as_str().unwrap()),
        pixels(v["png"].as_str().unwrap())
    );
    assert_eq!(
        v["command"],
        "cavesweep run --preset classic-4-5 --set fill=0.47 --set steps=6 --seed 42 --png cave.png"
    );
    assert_eq!(v["values"]["steps"], "6");
    assert_eq!(
        (v["width"].as_u64(), v["height"].as_u64()),
        (Some(140 * 6), Some(90 * 6))
    );
    // Frames at another scale: the last is the cave drawn at that scale.
    let v1 = s
        .post("/api/cave", json!({"preset": "classic-4-5", "set": {"fill": "0.47", "steps": "6"}, "seed": 42, "frames": true, "frame_scale": 1}))
        .json();
    let want1 =
        cavesweep_engine::render::rgb(cave.grid, 1, &cavesweep_engine::render::Marks::of(&recipe));
    let last = v1["frames"].as_array().unwrap().last().unwrap()["png"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(pixels(&last), (140, 90, want1));
    assert_eq!(v1["png"], v["png"]);
    // NetHack: the frames end with the bridge, whose frame is the cave.
    let v = s
        .post(
            "/api/cave",
            json!({"preset": "nethack-mines", "seed": 7, "frames": true}),
        )
        .json();
    let frames = v["frames"].as_array().unwrap();
    assert_eq!(frames.last().unwrap()["label"], "post bridge");
    assert_eq!(
        pixels(frames.last().unwrap()["png"].as_str().unwrap()),
        pixels(v["png"].as_str().unwrap())
    );
}

#[test]
fn bad_parameters_are_400_with_the_key() {
    let s = start(None);
    let cases = [
        (json!({"preset": "nope"}), "preset"),
        (json!({"set": {"rule": "B9/S"}}), "rule"),
        (json!({"set": {"fill": "2"}}), "fill"),
        (json!({"set": {"colour": "red"}}), "colour"),
        (json!({"set": {"rows": "5000", "cols": "5000"}}), "rows"),
        (json!({"set": {"steps": "100000"}}), "steps"),
        (json!({"scale": 0}), "scale"),
        (json!({"scale": 17}), "scale"),
        (
            json!({"set": {"rows": "1024", "cols": "1024"}, "scale": 16}),
            "scale",
        ),
        (json!({"seed": u64::MAX}), "seed"),
        (json!({"toml": "name = 3"}), "toml"),
        (json!({"preset": "classic-4-5", "toml": "x"}), "preset"),
        // Larger than Life updated in place at the size limit: minutes of work (~2.6 s a
        // step here), refused up front instead of answering 503 while it runs on.
        (
            json!({"set": {"rows": "1024", "cols": "1024", "steps": "1",
                "rule": "R15,C0,M1,S34..58,B34..45,NM", "update": "inplace-row-major"}}),
            "update",
        ),
    ];
    for (body, key) in cases {
        let r = s.post("/api/cave", body.clone());
        assert_eq!(r.status, 400, "{body}");
        let v = r.json();
        assert_eq!(v["key"], key, "{body}: {v}");
        assert!(!v["error"].as_str().unwrap().contains('\n'));
    }
    // Not JSON, unknown fields, wrong types: one-line 400s.
    for body in [&b"{"[..], b"[]", br#"{"seed": "x"}"#, br#"{"sede": 1}"#] {
        let h = s.host();
        let r = raw(
            s.port,
            "POST",
            "/api/cave",
            Some(&h),
            &[("X-Cavesweep-Token", &s.token)],
            body,
        );
        assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(body));
    }
    // A body over the cap.
    let big = json!({"toml": "#".repeat(MAX_BODY)});
    let r = s.post("/api/cave", big);
    assert_eq!(r.status, 413);
    // Said in JSON, as every error of the API.
    let e: Value = serde_json::from_slice(&r.body).expect("a JSON error body");
    assert!(
        e["error"]
            .as_str()
            .is_some_and(|m| m.contains("length limit")),
        "{e}"
    );
    // Thumbnails: count bounds.
    for count in [0, 17] {
        let r = s.post("/api/thumbs", json!({"count": count}));
        assert_eq!(r.status, 400);
        assert_eq!(r.json()["key"], "count");
    }
    let v = s
        .post(
            "/api/thumbs",
            json!({"preset": "roguebasin", "seed": 5, "count": 16}),
        )
        .json();
    let t = v["thumbs"].as_array().unwrap();
    assert_eq!(t.len(), 16);
    assert_eq!(t[15]["seed"], 20);
}

#[test]
fn exports_are_the_library_files() {
    let s = start(None);
    let recipe = cavesweep_core::presets::preset("chapter-strict").unwrap();
    for (format, magic) in [
        ("npy", &b"\x93NUMPY"[..]),
        ("png", b"\x89PNG"),
        ("tmx", b"<?xml"),
        ("tiles", b"\x89PNG"),
    ] {
        let r = s.post("/api/export", json!({"seed": 3, "format": format}));
        assert_eq!(r.status, 200, "{format}");
        assert!(r.body.starts_with(magic), "{format}");
        assert!(
            r.header("content-disposition")
                .unwrap()
                .starts_with("attachment; filename=\"")
        );
    }
    let r = s.post("/api/export", json!({"seed": 3, "format": "toml"}));
    assert_eq!(
        cavesweep_core::recipe::Recipe::from_toml(std::str::from_utf8(&r.body).unwrap()).unwrap(),
        recipe
    );
    let txt = s.post("/api/export", json!({"seed": 3, "format": "txt"}));
    let grid = cavesweep_engine::mapfile::decode(cavesweep_engine::mapfile::Format::Txt, &txt.body)
        .unwrap();
    let mut g = cavesweep_core::generate::Generator::new(
        &recipe,
        cavesweep_core::measure::MetricSet::EMPTY,
    )
    .unwrap();
    assert_eq!(&grid, g.run(3).unwrap().grid);
    let r = s.post("/api/export", json!({"format": "exe"}));
    assert_eq!((r.status, r.json()["key"].clone()), (400, json!("format")));
}

#[test]
fn search_streams_matches_and_refuses_bad_queries_with_the_column() {
    let s = start(None);
    let r = s.post(
        "/api/search",
        json!({"preset": "classic-4-5", "where": "components<=3 &&"}),
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["at"], 17);
    let r = s.post(
        "/api/search",
        json!({"where": "components>0", "seeds": "0..20000000"}),
    );
    assert_eq!((r.status, r.json()["key"].clone()), (400, json!("seeds")));
    let r = s.post(
        "/api/search",
        json!({"where": "components>0", "limit": 1, "top": 2}),
    );
    assert_eq!(r.status, 400);
    let r = s.post(
        "/api/search",
        json!({"preset": "classic-4-5", "where": "components>=2 && floor_fraction>0.3", "seeds": "0..5000", "limit": 5}),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/x-ndjson"));
    let lines: Vec<Value> = String::from_utf8(r.body)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seeds: Vec<u64> = lines
        .iter()
        .filter_map(|l| l["match"]["seed"].as_u64())
        .collect();
    // The library's own search gives the same seeds.
    let mut lib = cavesweep_core::generate::Generator::new(
        &cavesweep_core::presets::preset("classic-4-5").unwrap(),
        cavesweep_core::measure::MetricSet::ALL,
    )
    .unwrap();
    let q: cavesweep_core::query::Expr = "components>=2 && floor_fraction>0.3".parse().unwrap();
    let want: Vec<u64> = (0..5000u64)
        .filter(|&seed| q.eval(lib.run(seed).unwrap().values))
        .take(5)
        .collect();
    assert_eq!(seeds, want);
    assert_eq!(lines.last().unwrap()["end"]["matched"], 5);
    assert!(lines[0]["progress"].is_object());
}

#[test]
fn a_closed_connection_stops_its_search_and_frees_its_slot() {
    let s = start(None);
    // Two searches over every allowed seed hold both heavy slots; a third request is 429.
    let mut held = Vec::new();
    for _ in 0..HEAVY_AT_ONCE {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        let body =
            json!({"where": "components>1000", "seeds": "0..10000000", "limit": 1}).to_string();
        write!(
            c,
            "POST /api/search HTTP/1.1\r\nHost: {}\r\nX-Cavesweep-Token: {}\r\nContent-Length: {}\r\n\r\n{body}",
            s.host(),
            s.token,
            body.len()
        )
        .unwrap();
        let mut first = [0u8; 12];
        c.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        held.push(c);
    }
    let r = s.post("/api/cave", json!({"seed": 1}));
    assert_eq!(r.status, 429, "{}", String::from_utf8_lossy(&r.body));
    // Closing the connections stops the searches (at their next chunk) and frees the slots.
    drop(held);
    let t = std::time::Instant::now();
    loop {
        let r = s.post("/api/cave", json!({"seed": 1}));
        if r.status == 200 {
            break;
        }
        assert_eq!(r.status, 429);
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the searches did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_sweep_folder_is_read_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fills");
    sweep_into(
        &out,
        cavesweep_engine::sweep::SweepSpec {
            base: cavesweep_core::presets::preset("classic-4-5").unwrap(),
            varies: vec![
                "fill=0.40,0.45".parse().unwrap(),
                "steps=3,5".parse().unwrap(),
            ],
            seeds: 0..50,
            gate: "components<=3".parse().unwrap(),
            metrics: "components,floor_fraction".parse().unwrap(),
            per_seed: cavesweep_engine::sweep::PerSeed::All,
            chunk: None,
            format: cavesweep_engine::sweep::Format::Csv,
        },
        u64::MAX,
    );
    let before = listing(&out);
    let s = start(Some(out.clone()));
    let v = s.get("/api/sweep").json();
    assert_eq!(v["axes"][0]["key"], "fill");
    assert_eq!(v["points"].as_array().unwrap().len(), 4);
    assert_eq!(v["points"][3]["set"], json!({"fill": "0.45", "steps": "5"}));
    assert!(v["points"][3]["rates"][0].is_number());
    let p = s.get("/api/sweep/picks?point=3").json();
    assert!(p["typical"].is_u64());
    let r = cavesweep_core::recipe::Recipe::from_toml(p["toml"].as_str().unwrap()).unwrap();
    assert_eq!(
        (
            r.value("fill").unwrap().as_str(),
            r.value("steps").unwrap().as_str()
        ),
        ("0.45", "5")
    );
    assert_eq!(s.get("/api/sweep/picks?point=4").status, 400);
    assert_eq!(s.get("/api/sweep/picks?point=x").status, 400);
    drop(s);
    assert_eq!(listing(&out), before, "the explorer wrote into the folder");
    // A folder that is not a sweep is refused at start.
    let Err(e) = Server::bind(&Options {
        bind: "127.0.0.1".parse().unwrap(),
        port: 0,
        sweep: Some(dir.path().to_path_buf()),
        threads: 1,
        header_timeout: HEADER_TIMEOUT,
    }) else {
        panic!("accepted a folder without a manifest")
    };
    assert!(matches!(e, ExploreError::Sweep(_)), "{e}");
}

#[test]
fn an_unfinished_sweep_shows_the_points_done_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("part");
    // Stopped after its first chunks (as Ctrl-C stops it): a folder a sweep will resume.
    sweep_into(
        &out,
        cavesweep_engine::sweep::SweepSpec {
            base: cavesweep_core::presets::preset("chapter-strict").unwrap(),
            varies: vec!["fill=0.40,0.42,0.44,0.46,0.48,0.50".parse().unwrap()],
            seeds: 0..4000,
            gate: "components<=3".parse().unwrap(),
            metrics: "components".parse().unwrap(),
            per_seed: cavesweep_engine::sweep::PerSeed::None,
            chunk: Some(1000),
            format: cavesweep_engine::sweep::Format::Csv,
        },
        4000,
    );
    let s = start(Some(out.clone()));
    let v = s.get("/api/sweep").json();
    assert_eq!(v["complete"], false, "{v}");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    let done = points.iter().filter(|p| p["done"] == true).count();
    assert!(done < 6, "{done} points done of a stopped sweep");
}

/// Run a sweep into `out` on one thread, raising its stop flag once `stop_after` caves are
/// done (as Ctrl-C does; `u64::MAX` runs it to the end).
fn sweep_into(out: &std::path::Path, spec: cavesweep_engine::sweep::SweepSpec, stop_after: u64) {
    let plan = cavesweep_engine::sweep::Plan::new(spec).unwrap();
    let stop = AtomicBool::new(false);
    let opts = cavesweep_engine::sweep::RunOptions {
        shard: cavesweep_engine::sweep::Shard::WHOLE,
        threads: 1,
        force: false,
        command: "test",
        stop: &stop,
    };
    let r = cavesweep_engine::sweep::run(&plan, out, &opts, &mut |done, _| {
        if done >= stop_after {
            stop.store(true, Ordering::Relaxed);
        }
    });
    if stop_after == u64::MAX {
        r.unwrap();
    }
}

/// A base64 PNG's width, height and RGB pixels, decoded by the png crate.
fn pixels(b64: &str) -> (u32, u32, Vec<u8>) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let mut r = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Names, sizes and modification times of a folder's files.
fn listing(dir: &std::path::Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                m.len(),
                m.modified().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}
