//! Real stores for the shared result cache's tests, each started on a free loopback port and
//! stopped when dropped: Debian's redis-server and wsgidav (WebDAV), both installed by
//! scripts/setup.sh.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::tools_bin;

/// A loopback port nothing listens on (at the moment it is asked).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// Polls `ready` until it holds (a server that has started answers), for at most 20 s.
pub fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A Redis server of the test's own, stopped when dropped.
pub struct Redis {
    pub child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    pub fn start() -> Redis {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server is missing: run scripts/setup.sh (tools/apt-packages.txt)");
        let redis = Redis {
            child,
            port,
            _dir: dir,
        };
        wait_until("redis-server", || redis.cli(&["PING"]) == "PONG");
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn keys(&self) -> Vec<String> {
        let keys = self.cli(&["--scan"]);
        keys.lines().map(str::to_string).collect()
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A WebDAV server (wsgidav) serving a fresh folder, stopped when dropped.
pub struct WebDav {
    child: Child,
    port: u16,
    pub dir: tempfile::TempDir,
}

impl WebDav {
    pub fn start() -> WebDav {
        WebDav::serve(false)
    }

    /// A share that answers reads and refuses every write (403).
    pub fn start_read_only() -> WebDav {
        WebDav::serve(true)
    }

    fn serve(read_only: bool) -> WebDav {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let share = dir.path().join("share");
        std::fs::create_dir(&share).expect("mkdir");
        let config = dir.path().join("wsgidav.yaml");
        std::fs::write(
            &config,
            format!(
                "host: 127.0.0.1\nport: {port}\nverbose: 0\nprovider_mapping:\n  \"/\":\n    root: {}\n    readonly: {read_only}\nhttp_authenticator:\n  domain_controller: null\nsimple_dc:\n  user_mapping:\n    \"*\": true\n",
                share.display()
            ),
        )
        .expect("write wsgidav.yaml");
        let child = Command::new(tools_bin().join("wsgidav"))
            .arg("--config")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("wsgidav is missing: run scripts/setup.sh (requirements-tools.txt)");
        wait_until("wsgidav", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        WebDav { child, port, dir }
    }

    pub fn url(&self) -> String {
        format!("webdav+http://127.0.0.1:{}/qgates", self.port)
    }
}

impl Drop for WebDav {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The files under `dir`, but those still being written (`.tmp`).
pub fn files_in(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_name() != ".tmp")
        .map(|e| {
            if e.path().is_dir() {
                files_in(&e.path())
            } else {
                1
            }
        })
        .sum()
}
