//! Leaving gates out of a run by kind (`--skip-kinds test,e2e`, `--only-kinds lint,format`; the
//! agent's `skip_kinds` and `only_kinds`): a quick run without the slow suites, or only the
//! checks an agent is fixing. A gate left out is reported as skipped with the reason, so a
//! green run never hides that its tests did not run.

use crate::core::config::GateKind;

/// Which kinds of gates a run keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum KindFilter {
    /// Every kind (no filter given).
    #[default]
    All,
    /// Every kind but these.
    Skip(Vec<GateKind>),
    /// These kinds only.
    Only(Vec<GateKind>),
}

/// A kind filter that cannot be used, said so the caller can fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindFilterError {
    #[error("unknown gate kind `{0}`. The kinds are: {kinds}.", kinds = kind_list())]
    Unknown(String),
    #[error("the list of kinds is empty. Name at least one of: {kinds}.", kinds = kind_list())]
    Empty,
    #[error("give either the kinds to skip or the only kinds to run, not both")]
    Both,
}

/// `format, lint, typecheck, test, e2e, deps, other`.
pub fn kind_list() -> String {
    GateKind::ALL.map(GateKind::as_str).join(", ")
}

impl KindFilter {
    /// The filter from the kinds to skip or the only kinds to run, as names (at most one list).
    pub fn from_names(
        skip: Option<&[String]>,
        only: Option<&[String]>,
    ) -> Result<KindFilter, KindFilterError> {
        match (skip, only) {
            (Some(_), Some(_)) => Err(KindFilterError::Both),
            (Some(names), None) => Ok(KindFilter::Skip(parse(names)?)),
            (None, Some(names)) => Ok(KindFilter::Only(parse(names)?)),
            (None, None) => Ok(KindFilter::All),
        }
    }

    /// Why a gate of `kind` is left out of the run; `None`: it is kept.
    pub fn skip_reason(&self, kind: GateKind) -> Option<String> {
        let (kinds, listed, list) = match self {
            KindFilter::All => return None,
            KindFilter::Skip(kinds) => (kinds, true, "skip"),
            KindFilter::Only(kinds) => (kinds, false, "only"),
        };
        let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        (kinds.contains(&kind) == listed).then(|| {
            format!(
                "kind {} left out of this run ({list} kinds: {})",
                kind.as_str(),
                names.join(", ")
            )
        })
    }
}

fn parse(names: &[String]) -> Result<Vec<GateKind>, KindFilterError> {
    let mut kinds = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let kind = GateKind::parse(name).ok_or_else(|| KindFilterError::Unknown(name.into()))?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    if kinds.is_empty() {
        return Err(KindFilterError::Empty);
    }
    Ok(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn skip_and_only_leave_out_the_right_kinds() {
        let skip = KindFilter::from_names(Some(&names(&["test", "e2e"])), None).unwrap();
        assert_eq!(skip.skip_reason(GateKind::Lint), None);
        assert_eq!(
            skip.skip_reason(GateKind::E2e).as_deref(),
            Some("kind e2e left out of this run (skip kinds: test, e2e)")
        );
        let only = KindFilter::from_names(None, Some(&names(&["lint", "format"]))).unwrap();
        assert_eq!(only.skip_reason(GateKind::Format), None);
        assert_eq!(
            only.skip_reason(GateKind::Test).as_deref(),
            Some("kind test left out of this run (only kinds: lint, format)")
        );
        assert_eq!(KindFilter::All.skip_reason(GateKind::Deps), None);
    }

    #[test]
    fn bad_lists_are_errors_that_name_the_kinds() {
        let e = KindFilter::from_names(Some(&names(&["tests"])), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown gate kind `tests`. The kinds are: format, lint, typecheck, test, e2e, deps, other."
        );
        let e = KindFilter::from_names(None, Some(&names(&[" "]))).unwrap_err();
        assert_eq!(e, KindFilterError::Empty);
        let both = KindFilter::from_names(Some(&names(&["test"])), Some(&names(&["lint"])));
        assert_eq!(both, Err(KindFilterError::Both));
    }
}
