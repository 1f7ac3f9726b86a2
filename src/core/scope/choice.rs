//! What a face asked for (a scope name and maybe paths), turned into a `ScopeRequest`. The CLI
//! and the agent server take the same two inputs and must agree on what they mean, so the rule
//! lives here once.

use std::path::PathBuf;

use crate::core::scope::ScopeRequest;

/// A scope by name.
// The faces offer it as `--scope`, and as the `scope` of the editor's commands and the agent's
// tools; each says what the names mean in its own help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScopeChoice {
    Auto,
    Branch,
    Project,
    Files,
}

/// By hand, so a wrong value gets "expected a string" or the list of scopes, not serde's
/// "expected string or map" (an enum's other encoding, which means nothing to an agent).
impl<'de> serde::Deserialize<'de> for ScopeChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        ScopeChoice::ALL
            .into_iter()
            .find(|c| c.as_str() == name)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown scope `{name}`, expected one of `auto`, `branch`, `project`, `files`"
                ))
            })
    }
}

impl ScopeChoice {
    pub const ALL: [ScopeChoice; 4] = [
        ScopeChoice::Auto,
        ScopeChoice::Branch,
        ScopeChoice::Project,
        ScopeChoice::Files,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ScopeChoice::Auto => "auto",
            ScopeChoice::Branch => "branch",
            ScopeChoice::Project => "project",
            ScopeChoice::Files => "files",
        }
    }
}

/// A scope and paths that do not go together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScopeChoiceError {
    #[error("scope `files` needs the paths to check")]
    FilesNeedPaths,
    #[error(
        "scope `{}` chooses the files itself; drop the paths, or use scope `files`",
        .0.as_str()
    )]
    PathsWithOtherScope(ScopeChoice),
}

/// Paths alone mean `files`; no scope and no paths mean `auto`; `files` needs paths and the other
/// scopes take none.
pub fn scope_request(
    choice: Option<ScopeChoice>,
    paths: Vec<PathBuf>,
) -> Result<ScopeRequest, ScopeChoiceError> {
    match (choice, paths.is_empty()) {
        (Some(ScopeChoice::Files), true) => Err(ScopeChoiceError::FilesNeedPaths),
        (Some(s @ (ScopeChoice::Project | ScopeChoice::Auto | ScopeChoice::Branch)), false) => {
            Err(ScopeChoiceError::PathsWithOtherScope(s))
        }
        (Some(ScopeChoice::Project), true) => Ok(ScopeRequest::Project),
        (Some(ScopeChoice::Branch), true) => Ok(ScopeRequest::Branch),
        (Some(ScopeChoice::Auto) | None, true) => Ok(ScopeRequest::Auto),
        (Some(ScopeChoice::Files) | None, false) => Ok(ScopeRequest::Files(paths)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_scopes() {
        let p = || vec![PathBuf::from("a.py")];
        assert_eq!(scope_request(None, vec![]), Ok(ScopeRequest::Auto));
        assert_eq!(scope_request(None, p()), Ok(ScopeRequest::Files(p())));
        assert_eq!(
            scope_request(Some(ScopeChoice::Files), p()),
            Ok(ScopeRequest::Files(p()))
        );
        assert_eq!(
            scope_request(Some(ScopeChoice::Project), vec![]),
            Ok(ScopeRequest::Project)
        );
        assert_eq!(
            scope_request(Some(ScopeChoice::Files), vec![]),
            Err(ScopeChoiceError::FilesNeedPaths)
        );
        assert_eq!(
            scope_request(Some(ScopeChoice::Branch), p()),
            Err(ScopeChoiceError::PathsWithOtherScope(ScopeChoice::Branch))
        );
    }
}
