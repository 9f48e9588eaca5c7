//! `cavesweep explore` as a user starts it: the real binary, its printed URL, the page's caves
//! against `cavesweep run --png` byte for byte, Ctrl-C, two explorers at once, bad folders and
//! flags refused in one line, and a closed stdout or stderr.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::{bin, run, scratch, stderr};
use serde_json::{Value, json};

struct Explorer {
    child: Child,
    port: u16,
    token: String,
}

impl Drop for Explorer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Explorer {
    let mut child = bin()
        .arg("explore")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("explore starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_string();
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("first line is not the URL: {url:?}"));
    let (port, token) = rest.split_once("/?token=").unwrap();
    Explorer {
        child,
        port: port.parse().unwrap(),
        token: token.to_string(),
    }
}

/// POST a JSON body; the status and body.
fn post(e: &Explorer, path: &str, body: &Value) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", e.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let b = body.to_string();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Cavesweep-Token: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
        e.port,
        e.token,
        b.len()
    )
    .unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let split = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let status = std::str::from_utf8(&buf[9..12]).unwrap().parse().unwrap();
    (status, buf[split + 4..].to_vec())
}

#[test]
fn the_page_caves_are_run_png_byte_for_byte() {
    let dir = scratch("explore_png");
    let e = start(&[]);
    let cases: &[(&str, &[&str], u64, u16)] = &[
        ("chapter-strict", &[], 42, 6),
        ("classic-4-5", &["fill=0.47", "steps=6"], 7, 3),
        ("nethack-mines", &[], 1234, 6),
        ("roguebasin", &["connectivity=8"], 99, 2),
        ("classic-4-5", &["rule=B2/S34H", "connectivity=6"], 5, 4),
    ];
    for (k, (preset, sets, seed, scale)) in cases.iter().enumerate() {
        let png = dir.join(format!("{k}.png"));
        let mut args = vec!["run", "--preset", preset];
        for s in *sets {
            args.extend(["--set", s]);
        }
        let (seed_s, scale_s) = (seed.to_string(), scale.to_string());
        args.extend(["--seed", &seed_s, "--scale", &scale_s, "--png"]);
        args.push(png.to_str().unwrap());
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let set: serde_json::Map<String, Value> = sets
            .iter()
            .map(|s| {
                let (a, b) = s.split_once('=').unwrap();
                (a.to_string(), Value::from(b))
            })
            .collect();
        let (status, body) = post(
            &e,
            "/api/cave",
            &json!({"preset": preset, "set": set, "seed": seed, "scale": scale}),
        );
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        let v: Value = serde_json::from_slice(&body).unwrap();
        let got = base64::engine::general_purpose::STANDARD
            .decode(v["png"].as_str().unwrap())
            .unwrap();
        assert_eq!(
            got,
            std::fs::read(&png).unwrap(),
            "{preset} {sets:?} seed {seed}"
        );
        // The command the page offers is the one that made the file (but its --png name).
        let cmd = v["command"].as_str().unwrap();
        assert!(
            cmd.starts_with(&format!("cavesweep run --preset {preset}")),
            "{cmd}"
        );
        assert!(cmd.contains(&format!("--seed {seed}")), "{cmd}");
    }
}

#[test]
fn ctrl_c_stops_it_and_two_run_side_by_side() {
    let a = start(&[]);
    let b = start(&[]);
    assert_ne!(a.port, b.port);
    assert_ne!(a.token, b.token);
    // Each answers with its own token only.
    let (s, _) = post(&a, "/api/cave", &json!({"seed": 1}));
    assert_eq!(s, 200);
    let wrong = Explorer {
        child: bin().arg("--version").spawn().unwrap(),
        port: b.port,
        token: a.token.clone(),
    };
    assert_eq!(post(&wrong, "/api/cave", &json!({"seed": 1})).0, 403);
    drop(wrong);
    let mut a = a;
    let pid = a.child.id() as i32;
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let t = Instant::now();
    let status = loop {
        if let Some(s) = a.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "SIGINT did not stop it"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    // b still serves.
    assert_eq!(post(&b, "/api/cave", &json!({"seed": 2})).0, 200);
}

#[test]
fn bad_folders_and_flags_are_one_line_errors() {
    let dir = scratch("explore_bad");
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let file = dir.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let missing = dir.join("missing");
    for (args, want) in [
        (vec![empty.to_str().unwrap()], "empty"),
        (vec![file.to_str().unwrap()], "not a folder"),
        (vec![missing.to_str().unwrap()], "cannot read"),
        (vec!["--threads", "0"], "--threads"),
        (vec!["--bind", "nonsense"], "--bind"),
        (vec!["--port", "70000"], "--port"),
    ] {
        let o = run(&[&["explore"], args.as_slice()].concat());
        assert!(!o.status.success(), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(o.stdout.is_empty(), "{args:?}: printed a URL");
    }
    // A port already taken: refused in one line.
    let e = start(&[]);
    let port = e.port.to_string();
    let o = run(&["explore", "--port", &port]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot listen"), "{}", stderr(&o));
}

#[test]
fn a_wide_bind_is_warned_about_and_closed_streams_do_not_kill_it() {
    // A non-loopback bind warns on stderr (and still prints the URL first on stdout).
    let mut child = bin()
        .args(["explore", "--bind", "0.0.0.0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("http://0.0.0.0:"), "{line}");
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    // Closed stderr (2>&-): it serves anyway (its notice has nowhere to go).
    let mut c = bin();
    c.arg("explore").stdin(Stdio::null()).stdout(Stdio::piped());
    // SAFETY: close(2) between fork and exec touches only the child's descriptors.
    unsafe {
        use std::os::unix::process::CommandExt;
        c.pre_exec(|| {
            libc::close(2);
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let rest = line.trim().strip_prefix("http://127.0.0.1:").unwrap();
    let (port, token) = rest.split_once("/?token=").unwrap();
    let e = Explorer {
        child,
        port: port.parse().unwrap(),
        token: token.to_string(),
    };
    assert_eq!(post(&e, "/api/cave", &json!({"seed": 3})).0, 200);
}
