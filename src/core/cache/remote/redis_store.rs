//! Redis, spoken to directly: entries are fetched with MGET and written with pipelined SETs,
//! many to a round trip, over one multiplexed connection (a pooled client that checks each
//! connection before each request makes every entry two round trips, past a run's budget).

use redis::aio::MultiplexedConnection;
use redis::{ConnectionAddr, ErrorKind, IntoConnectionInfo, RedisError, ServerErrorKind};

use super::Failure;

/// Entries asked for, or written, in one command.
pub(super) const BATCH: usize = 512;
/// Commands in flight at once on the one connection.
pub(super) const IN_FLIGHT: usize = 4;

#[derive(Debug)]
pub(super) struct RedisStore {
    client: redis::Client,
    /// Made by the first request, within the run's budget; dropped after a failure so the
    /// next run connects again.
    conn: tokio::sync::Mutex<Option<MultiplexedConnection>>,
}

impl RedisStore {
    pub(super) fn open(
        tls: bool,
        host: &str,
        port: u16,
        db: i64,
        user: Option<String>,
        password: Option<String>,
    ) -> Result<RedisStore, String> {
        let addr = if tls {
            ConnectionAddr::TcpTls {
                host: host.to_string(),
                port,
                insecure: false,
                tls_params: None,
            }
        } else {
            ConnectionAddr::Tcp(host.to_string(), port)
        };
        let mut settings = redis::RedisConnectionInfo::default().set_db(db);
        if let Some(user) = user {
            settings = settings.set_username(user);
        }
        if let Some(password) = password {
            settings = settings.set_password(password);
        }
        let client = addr
            .into_connection_info()
            .map(|info| info.set_redis_settings(settings))
            .and_then(redis::Client::open)
            .map_err(|e| format!("cannot be opened ({})", short(&e)))?;
        Ok(RedisStore {
            client,
            conn: tokio::sync::Mutex::new(None),
        })
    }

    async fn conn(&self) -> Result<MultiplexedConnection, Failure> {
        let mut conn = self.conn.lock().await;
        if let Some(c) = conn.as_ref() {
            return Ok(c.clone());
        }
        // The run's budget bounds every wait; the client's own timeouts (half a second for an
        // answer) would cut a large MGET short.
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(None)
            .set_response_timeout(None);
        let made = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| match e.kind() {
                ErrorKind::Io => Failure::Broken(format!("not reachable: {}", short(&e))),
                _ => failure(&e),
            })?;
        *conn = Some(made.clone());
        Ok(made)
    }

    /// The answer; after a failure the connection is forgotten, as it may be what broke.
    async fn settle<T>(&self, answer: redis::RedisResult<T>) -> Result<T, Failure> {
        if answer.is_err() {
            *self.conn.lock().await = None;
        }
        answer.map_err(|e| failure(&e))
    }

    pub(super) async fn get_many(&self, names: &[String]) -> Result<Vec<Option<Vec<u8>>>, Failure> {
        let mut conn = self.conn().await?;
        let answer = redis::cmd("MGET").arg(names).query_async(&mut conn).await;
        self.settle(answer).await
    }

    pub(super) async fn put_many(&self, entries: &[(String, Vec<u8>)]) -> Result<(), Failure> {
        let mut conn = self.conn().await?;
        let mut pipe = redis::pipe();
        for (name, bytes) in entries {
            pipe.set(name, bytes).ignore();
        }
        let answer = pipe.query_async::<()>(&mut conn).await;
        self.settle(answer).await
    }
}

fn failure(e: &RedisError) -> Failure {
    tracing::debug!("shared cache: {e}");
    match e.kind() {
        // An ACL that allows reading only, or a replica.
        ErrorKind::Server(ServerErrorKind::NoPerm | ServerErrorKind::ReadOnly) => {
            Failure::Refused(format!("permission denied: {}", short(e)))
        }
        _ => Failure::Broken(short(e)),
    }
}

/// One line, of a bounded length, for a report.
fn short(e: &RedisError) -> String {
    let text = e.to_string();
    let line = text.lines().next().unwrap_or("").trim();
    line.chars().take(160).collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::{Child, Command, Stdio};

    use super::*;

    /// A redis-server, stopped when dropped (a failed assertion leaves none behind).
    struct Server(Child);

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// Debian's redis-server on `port`, once it accepts connections.
    fn serve(port: u16, dir: &Path) -> Server {
        let server = Server(
            Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--dir"])
                .arg(dir)
                .stdout(Stdio::null())
                .spawn()
                .expect("redis-server is missing: run scripts/setup.sh"),
        );
        for _ in 0..1000 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("redis-server did not start on port {port}");
    }

    /// The language server keeps its store between runs: a Redis restarted under its
    /// connection fails one request, and the next connects again.
    #[tokio::test]
    async fn a_restarted_store_is_connected_to_again() {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let store = RedisStore::open(false, "127.0.0.1", port, 0, None, None).unwrap();
        let entry = [("k".to_string(), b"v".to_vec())];
        let names = ["k".to_string()];
        let server = serve(port, dir.path());
        store.put_many(&entry).await.unwrap();
        assert_eq!(store.get_many(&names).await.unwrap(), [Some(b"v".to_vec())]);
        drop(server);
        assert!(store.get_many(&names).await.is_err());
        // Restarted empty (it saves nothing): an answer, from a new connection (the old one
        // is broken).
        let _server = serve(port, dir.path());
        let again =
            tokio::time::timeout(std::time::Duration::from_secs(10), store.get_many(&names));
        assert_eq!(again.await.expect("an answer").unwrap(), [None]);
    }
}
