//! A shared store: Redis spoken to directly (`redis_store`), every other form through an
//! OpenDAL operator; credentials from the environment only, and entries named by a hash of
//! their key.

use std::sync::Arc;

use opendal::{ErrorKind, Operator, services};

use super::Failure;
use super::redis_store::{self, RedisStore};
use super::url::StoreUrl;

/// The environment variables that hold the user and password of a Redis store.
pub const USER_VAR: &str = "QGATES_REMOTE_CACHE_USER";
pub const PASSWORD_VAR: &str = "QGATES_REMOTE_CACHE_PASSWORD";

/// An opened store. Opening connects to nothing: the first read does, within the run's budget.
#[derive(Debug, Clone)]
pub struct Store {
    backend: Backend,
    pub url: StoreUrl,
}

#[derive(Debug, Clone)]
enum Backend {
    Dal(Operator),
    Redis(Arc<RedisStore>),
}

/// Requests an OpenDAL store has in flight at once: enough to hide its latency, few enough not
/// to flood it.
const DAL_IN_FLIGHT: usize = 32;

impl Failure {
    fn of(e: &opendal::Error) -> Failure {
        // The whole of it, for whoever asks for debug logs.
        tracing::debug!("shared cache: {e}");
        let why = short(e);
        match e.kind() {
            ErrorKind::PermissionDenied => Failure::Refused(why),
            _ => Failure::Broken(why),
        }
    }
}

/// One line for a report: the kind of failure, and its root cause (`Connection refused`) or the
/// store's first words, not OpenDAL's whole text (request headers, an HTML error page).
fn short(e: &opendal::Error) -> String {
    let kind = match e.kind() {
        ErrorKind::PermissionDenied => "permission denied".to_string(),
        ErrorKind::RateLimited => "rate limited".to_string(),
        ErrorKind::ConfigInvalid => "not configured right".to_string(),
        ErrorKind::Unexpected => "failed".to_string(),
        other => other.to_string(),
    };
    let mut root: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(next) = root.and_then(std::error::Error::source) {
        root = Some(next);
    }
    let detail = match root {
        Some(cause) => cause.to_string(),
        None => e.message().lines().next().unwrap_or("").to_string(),
    };
    let detail = detail.trim();
    if detail.is_empty() || detail.starts_with('<') {
        return kind;
    }
    let detail: String = detail.chars().take(160).collect();
    format!("{kind}: {detail}")
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Store {
    /// The operator for `url`; an error says why it cannot be made (GitHub Actions' cache
    /// outside a workflow, an S3 store without a region).
    pub fn open(url: &StoreUrl) -> Result<Store, String> {
        // HTTP needs a process-wide transport and TLS a crypto provider; both are installed once.
        let _ = rustls::crypto::ring::default_provider().install_default();
        opendal_http_transport_reqwest::install_default();
        let op = match url {
            StoreUrl::Folder(dir) => {
                let root = dir.display().to_string();
                // Written beside the entries and renamed into place: a reader on another
                // machine never sees half an entry.
                let tmp = dir.join(".tmp").display().to_string();
                Operator::new(services::Fs::default().root(&root).atomic_write_dir(&tmp))
            }
            StoreUrl::Redis {
                tls,
                host,
                port,
                db,
            } => {
                let store =
                    RedisStore::open(*tls, host, *port, *db, env(USER_VAR), env(PASSWORD_VAR))?;
                return Ok(Store {
                    backend: Backend::Redis(Arc::new(store)),
                    url: url.clone(),
                });
            }
            StoreUrl::S3 {
                bucket,
                prefix,
                endpoint,
                region,
            } => {
                // Neither ~/.aws nor the instance metadata service: the standard variables only.
                let mut b = services::S3::default()
                    .bucket(bucket)
                    .root(&format!("/{prefix}"))
                    .disable_config_load()
                    .disable_ec2_metadata();
                if let Some(endpoint) = endpoint.clone().or_else(|| env("AWS_ENDPOINT_URL")) {
                    b = b.endpoint(&endpoint);
                }
                if let Some(region) = region
                    .clone()
                    .or_else(|| env("AWS_REGION"))
                    .or_else(|| env("AWS_DEFAULT_REGION"))
                {
                    b = b.region(&region);
                }
                match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
                    (Some(id), Some(secret)) => {
                        b = b.access_key_id(&id).secret_access_key(&secret);
                        if let Some(token) = env("AWS_SESSION_TOKEN") {
                            b = b.session_token(&token);
                        }
                    }
                    // A public bucket (read only, as the store will say when written).
                    _ => b = b.skip_signature(),
                }
                Operator::new(b)
            }
            StoreUrl::Gha => Operator::new(services::Ghac::default().root("/qgates")),
        };
        let op = op.map_err(|e| format!("cannot be opened ({})", short(&e)))?;
        Ok(Store {
            backend: Backend::Dal(op),
            url: url.clone(),
        })
    }

    /// Where the entry with this key lives: a hash (keys hold any characters), under a versioned
    /// folder, fanned out over 256 subfolders so no folder of a file store grows too large.
    pub fn name_of(full_key: &str) -> String {
        let hex = crate::core::cache::keys::sha256_hex(full_key.as_bytes());
        format!("v1/{}/{}", &hex[..2], &hex[2..])
    }

    /// How many entries one request carries, and how many requests a run keeps in flight.
    pub fn batching(&self) -> (usize, usize) {
        match self.backend {
            Backend::Dal(_) => (1, DAL_IN_FLIGHT),
            Backend::Redis(_) => (redis_store::BATCH, redis_store::IN_FLIGHT),
        }
    }

    /// Each named entry's bytes, in order; `None` where the store has none.
    pub async fn get_many(&self, names: &[String]) -> Result<Vec<Option<Vec<u8>>>, Failure> {
        match &self.backend {
            Backend::Redis(r) => r.get_many(names).await,
            Backend::Dal(op) => {
                let mut out = Vec::with_capacity(names.len());
                for name in names {
                    out.push(dal_get(op, name).await?);
                }
                Ok(out)
            }
        }
    }

    pub async fn put_many(&self, entries: &[(String, Vec<u8>)]) -> Result<(), Failure> {
        match &self.backend {
            Backend::Redis(r) => r.put_many(entries).await,
            Backend::Dal(op) => {
                for (name, bytes) in entries {
                    dal_put(op, name, bytes.clone()).await?;
                }
                Ok(())
            }
        }
    }

    /// Whether the store answers: a read of an entry no one writes (absent is an answer).
    pub async fn probe(&self) -> Result<(), Failure> {
        self.get_many(&["v1/probe".to_string()]).await.map(drop)
    }
}

async fn dal_get(op: &Operator, name: &str) -> Result<Option<Vec<u8>>, Failure> {
    match op.read(name).await {
        Ok(buffer) => Ok(Some(buffer.to_vec())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Failure::of(&e)),
    }
}

async fn dal_put(op: &Operator, name: &str, bytes: Vec<u8>) -> Result<(), Failure> {
    let mut written = op.write(name, bytes.clone()).await;
    // A failure the store calls temporary (S3's 503 SlowDown, a connection reset while many
    // writes are in flight) is tried once more.
    if written.as_ref().is_err_and(opendal::Error::is_temporary) {
        written = op.write(name, bytes).await;
    }
    match written {
        Ok(_) => Ok(()),
        // Another machine wrote the same entry first (GitHub Actions' cache keeps the first).
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::AlreadyExists | ErrorKind::ConditionNotMatch
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(Failure::of(&e)),
    }
}
