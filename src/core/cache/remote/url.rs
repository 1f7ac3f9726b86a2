//! The shared store's URL: which forms qgates can use, and how a store is named in reports and
//! logs — never with credentials, which come from the environment only (a URL that carries some
//! is refused, so `quality.yaml` cannot hold a secret).

use std::fmt;
use std::path::PathBuf;

/// The forms, as every error about a URL lists them.
pub const FORMS: &str = "file:///absolute/folder, redis://host:port[/db] (rediss:// for TLS), \
s3://bucket[/prefix]?endpoint=URL&region=NAME and gha (GitHub Actions' cache)";

/// A shared store qgates can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// A folder, e.g. on a shared mount.
    Folder(PathBuf),
    Redis {
        tls: bool,
        host: String,
        port: u16,
        db: i64,
    },
    /// Credentials from the standard AWS environment variables.
    S3 {
        bucket: String,
        prefix: String,
        endpoint: Option<String>,
        region: Option<String>,
    },
    /// GitHub Actions' cache service, configured by the runner's environment.
    Gha,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("`{0}` is not a shared cache qgates can use. The forms are {FORMS}.")]
    Unusable(String),
    #[error(
        "`{0}` carries credentials; they are read from the environment only: \
         QGATES_REMOTE_CACHE_USER and QGATES_REMOTE_CACHE_PASSWORD (Redis), the AWS_* \
         variables (S3). Remove them from the URL."
    )]
    Credentials(String),
    #[error("`{url}`: {why} The forms are {FORMS}.")]
    Bad { url: String, why: String },
}

impl StoreUrl {
    pub fn parse(text: &str) -> Result<StoreUrl, UrlError> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("gha") {
            return Ok(StoreUrl::Gha);
        }
        let shown = redacted(text);
        let url = ::url::Url::parse(text).map_err(|_| UrlError::Unusable(shown.clone()))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Credentials(shown));
        }
        let bad = |why: &str| UrlError::Bad {
            url: shown.clone(),
            why: why.to_string(),
        };
        let host = || {
            url.host_str()
                .filter(|h| !h.is_empty())
                .map(str::to_string)
                .ok_or_else(|| bad("it names no host."))
        };
        let path = url.path().trim_matches('/').to_string();
        let scheme = url.scheme().to_ascii_lowercase();
        if url.fragment().is_some() || (url.query().is_some() && scheme != "s3") {
            return Err(bad("only s3:// takes `?…`, and no form takes `#…`."));
        }
        match scheme.as_str() {
            "file" => {
                if url
                    .host_str()
                    .is_some_and(|h| !h.is_empty() && h != "localhost")
                {
                    return Err(bad(
                        "a file:// URL names a folder of this machine: file:///absolute/folder.",
                    ));
                }
                let folder = url
                    .to_file_path()
                    .map_err(|_| bad("give an absolute folder: file:///absolute/folder."))?;
                Ok(StoreUrl::Folder(folder))
            }
            "redis" | "rediss" => {
                let db = if path.is_empty() {
                    0
                } else {
                    path.parse::<i64>()
                        .ok()
                        .filter(|n| *n >= 0)
                        .ok_or_else(|| bad("the path of a redis:// URL is the database number, e.g. redis://host:6379/2."))?
                };
                Ok(StoreUrl::Redis {
                    tls: scheme == "rediss",
                    host: host()?,
                    port: url.port().unwrap_or(6379),
                    db,
                })
            }
            "s3" => {
                let (mut endpoint, mut region) = (None, None);
                for (key, value) in url.query_pairs() {
                    match key.as_ref() {
                        "endpoint" => endpoint = Some(value.into_owned()),
                        "region" => region = Some(value.into_owned()),
                        k if k.contains("key") || k.contains("secret") || k.contains("token") => {
                            return Err(UrlError::Credentials(shown.clone()));
                        }
                        other => {
                            return Err(bad(&format!(
                                "`{other}` is not a setting of s3://; it takes `endpoint` and `region`."
                            )));
                        }
                    }
                }
                Ok(StoreUrl::S3 {
                    bucket: host()?,
                    prefix: path,
                    endpoint,
                    region,
                })
            }
            // Stores qgates no longer speaks: said by name, with what to use instead.
            "webdav" | "webdav+http" | "webdav+https" | "dav" | "davs" => Err(bad(
                "WebDAV is not a store qgates can use. Mount the share and give its folder \
                 (file:///mount/point/qgates), or use an S3-compatible store or Redis.",
            )),
            "http" | "https" => Err(bad(
                "a plain web server is not a store qgates can use. To serve the cache read only, \
                 use an S3-compatible bucket that allows anonymous reads (s3://bucket?endpoint=URL, \
                 with no AWS_* credentials) or a folder on a shared mount.",
            )),
            _ => Err(UrlError::Unusable(shown)),
        }
    }
}

/// The store as reports and logs name it (it holds no credentials: see `parse`).
impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Folder(p) => write!(f, "file://{}", p.display()),
            StoreUrl::Redis {
                tls,
                host,
                port,
                db,
            } => {
                let s = if *tls { "rediss" } else { "redis" };
                write!(f, "{s}://{host}:{port}/{db}")
            }
            StoreUrl::S3 {
                bucket,
                prefix,
                endpoint,
                region,
            } => {
                write!(f, "s3://{bucket}")?;
                if !prefix.is_empty() {
                    write!(f, "/{prefix}")?;
                }
                let query: Vec<String> = [("endpoint", endpoint), ("region", region)]
                    .into_iter()
                    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}")))
                    .collect();
                if !query.is_empty() {
                    write!(f, "?{}", query.join("&"))?;
                }
                Ok(())
            }
            StoreUrl::Gha => write!(f, "gha"),
        }
    }
}

/// `text` with whatever stands between `://` and an `@` replaced, and every query value but
/// s3's `endpoint` and `region`, for messages about a URL that may carry a secret.
pub fn redacted(text: &str) -> String {
    let (text, query) = match text.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (text, None),
    };
    let mut shown = match text.find("://").map(|i| i + 3) {
        Some(start) => {
            let rest = &text[start..];
            let authority_end = rest.find(['/', '#']).unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => format!("{}…@{}", &text[..start], &rest[at + 1..]),
                None => text.to_string(),
            }
        }
        None => text.to_string(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) if k == "endpoint" || k == "region" => format!("{k}={v}"),
                Some((k, _)) => format!("{k}=…"),
                None => pair.to_string(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> StoreUrl {
        StoreUrl::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn every_form_parses_and_is_shown_as_written() {
        let cases = [
            ("file:///srv/cache", "file:///srv/cache"),
            ("redis://127.0.0.1:6380/2", "redis://127.0.0.1:6380/2"),
            ("redis://cache.local", "redis://cache.local:6379/0"),
            ("rediss://cache.local:6390", "rediss://cache.local:6390/0"),
            (
                "s3://bucket/qgates/ci?endpoint=http://127.0.0.1:9000&region=eu-west-1",
                "s3://bucket/qgates/ci?endpoint=http://127.0.0.1:9000&region=eu-west-1",
            ),
            ("s3://bucket", "s3://bucket"),
            ("s3://bucket/qgates/", "s3://bucket/qgates"),
            ("gha", "gha"),
            ("GHA", "gha"),
        ];
        for (text, shown) in cases {
            assert_eq!(ok(text).to_string(), shown, "{text}");
            assert_eq!(ok(shown), ok(text), "{shown} reads back");
        }
        assert_eq!(ok("file:///srv/c"), StoreUrl::Folder("/srv/c".into()));
    }

    #[test]
    fn what_cannot_be_used_says_which_forms_exist() {
        for bad in [
            "ftp://host/x",
            "not a url",
            "redis://host/db",
            "file://server/share",
            "s3://bucket?versioned=1",
            "http://host/x?token=1#top",
            "",
        ] {
            let e = StoreUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("file:///absolute/folder"), "{bad}: {e}");
            assert!(e.contains("gha"), "{bad}: {e}");
        }
    }

    /// WebDAV and plain HTTP were stores once: a URL of theirs says so by name, what to use
    /// instead, and which forms exist (none of them the dropped ones).
    #[test]
    fn a_dropped_store_is_named_with_what_to_use_instead() {
        for (text, named, instead) in [
            (
                "webdav+http://127.0.0.1:8080/dav/qgates",
                "WebDAV",
                "file:///mount/point",
            ),
            (
                "webdav+https://dav.example/x",
                "WebDAV",
                "file:///mount/point",
            ),
            ("webdav://dav.example/x", "WebDAV", "file:///mount/point"),
            (
                "https://ci.example/cache/",
                "plain web server",
                "anonymous reads",
            ),
            (
                "http://127.0.0.1:8080/cache",
                "plain web server",
                "anonymous reads",
            ),
        ] {
            let e = StoreUrl::parse(text).unwrap_err();
            assert!(matches!(e, UrlError::Bad { .. }), "{text}: {e}");
            let e = e.to_string();
            assert!(e.contains(named) && e.contains(instead), "{text}: {e}");
            assert!(
                e.contains("The forms are file:///absolute/folder"),
                "{text}: {e}"
            );
        }
        assert!(
            !FORMS.contains("webdav") && !FORMS.contains("http"),
            "{FORMS}"
        );
    }

    #[test]
    fn credentials_are_refused_and_never_repeated() {
        for text in [
            "redis://user:hunter2@cache:6379",
            "rediss://:hunter2@cache:6380",
            "s3://bucket?secret_access_key=hunter2",
        ] {
            let e = StoreUrl::parse(text).unwrap_err();
            assert!(matches!(e, UrlError::Credentials(_)), "{text}: {e}");
            assert!(!e.to_string().contains("hunter2"), "{e}");
            assert!(
                e.to_string().contains("QGATES_REMOTE_CACHE_PASSWORD"),
                "{e}"
            );
        }
        assert_eq!(redacted("ftp://a:b@host/x"), "ftp://…@host/x");
        assert_eq!(redacted("redis://host:1"), "redis://host:1");
        assert_eq!(
            redacted("s3://b?region=x&key=hunter2"),
            "s3://b?region=x&key=…"
        );
    }
}
