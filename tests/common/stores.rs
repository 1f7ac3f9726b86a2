//! Real stores for the shared result cache's tests: Debian's redis-server (installed by
//! scripts/setup.sh), started on a free loopback port and stopped when dropped, and a folder
//! that refuses writes.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// A folder store another machine filled, as a reader gets it on a read-only mount: reads are
/// answered, every write is refused with "permission denied" (EACCES, or EPERM for root). Mode
/// 0555 on the folder and on its `.tmp` (where a write starts); root, whom modes do not stop,
/// gets the immutable attribute (`chattr +i`) instead. Made writable again when dropped.
pub struct ReadOnlyFolder {
    pub dir: tempfile::TempDir,
    immutable: bool,
}

impl ReadOnlyFolder {
    pub fn new() -> ReadOnlyFolder {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join(".tmp")).expect("mkdir .tmp");
        let mut folder = ReadOnlyFolder {
            dir,
            immutable: false,
        };
        folder.set_read_only();
        if !folder.refuses_writes() {
            folder.immutable = true;
            let set = folder.chattr("+i");
            assert!(set.is_ok(), "chattr +i: {}", set.unwrap_err());
            assert!(
                folder.refuses_writes(),
                "could not make a folder that refuses root's writes (chattr +i needs \
                 CAP_LINUX_IMMUTABLE and a file system that keeps the attribute)"
            );
        }
        folder
    }

    pub fn url(&self) -> String {
        format!("file://{}", self.dir.path().display())
    }

    /// The folders a write would touch.
    fn folders(&self) -> [std::path::PathBuf; 2] {
        [self.dir.path().join(".tmp"), self.dir.path().to_path_buf()]
    }

    fn set_read_only(&self) {
        use std::os::unix::fs::PermissionsExt;
        for folder in self.folders() {
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o555))
                .expect("chmod");
        }
    }

    fn chattr(&self, flag: &str) -> Result<(), String> {
        let out = Command::new("chattr")
            .arg(flag)
            .args(self.folders())
            .output()
            .map_err(|e| format!("chattr (e2fsprogs) did not start: {e}"))?;
        match out.status.success() {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    }

    /// Whether neither folder takes a new entry, refused as a permission.
    fn refuses_writes(&self) -> bool {
        self.folders().iter().all(|folder| {
            let probe = folder.join("qgates-probe");
            match std::fs::create_dir(&probe) {
                Ok(()) => {
                    let _ = std::fs::remove_dir(&probe);
                    false
                }
                Err(e) => e.kind() == std::io::ErrorKind::PermissionDenied,
            }
        })
    }
}

impl Drop for ReadOnlyFolder {
    fn drop(&mut self) {
        // Best effort: a failure here leaves a folder in /tmp, not a failed test.
        if self.immutable {
            let _ = self.chattr("-i");
        }
        use std::os::unix::fs::PermissionsExt;
        for folder in self.folders() {
            let _ = std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755));
        }
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
