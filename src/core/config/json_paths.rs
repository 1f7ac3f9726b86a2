//! The small languages of `parsing` keys that point into a tool's JSON: JSON Pointers
//! (`violations_path`), field paths (`field_map`) and conditions (`filter`, `fixable_when`).

use super::spec::*;

/// Parses a JSON Pointer (RFC 6901, with `*` for "every element"). `""` and `/` are the root.
pub fn parse_pointer(s: &str) -> Result<Vec<PointerStep>, String> {
    if s.is_empty() || s == "/" {
        return Ok(Vec::new());
    }
    let Some(rest) = s.strip_prefix('/') else {
        return Err(format!(
            "a pointer starts with `/` (or is \"\" for the root). Write `/{s}`."
        ));
    };
    let mut steps = Vec::new();
    for seg in rest.split('/') {
        if seg == "*" {
            steps.push(PointerStep::Each);
            continue;
        }
        if seg
            .split('~')
            .skip(1)
            .any(|after| !after.starts_with(['0', '1']))
        {
            return Err(
                "`~` must be followed by 0 (for `~`) or 1 (for `/`). Escape a literal `~` as `~0`."
                    .into(),
            );
        }
        // `~1` first, so `~01` reads as `~1`.
        steps.push(PointerStep::Key(seg.replace("~1", "/").replace("~0", "~")));
    }
    Ok(steps)
}

/// Parses a field path such as `location/row` or `../../filePath`.
pub fn parse_field_path(s: &str) -> Result<FieldPath, String> {
    let trimmed = s.trim().trim_start_matches('/');
    if trimmed.is_empty() {
        return Err("it is empty. Name the key, e.g. `message` or `location/row`.".into());
    }
    let mut up = 0;
    let mut keys = Vec::new();
    for seg in trimmed.split('/') {
        match seg {
            ".." if keys.is_empty() => up += 1,
            ".." => return Err("`..` may only stand at the start (it climbs out of the item). Move it to the front.".into()),
            "" => return Err("it has an empty segment (`//`). Remove the extra `/`.".into()),
            k => keys.push(k.to_string()),
        }
    }
    Ok(FieldPath { up, keys })
}

/// Parses `path == 'value'` or `path != 'value'` (quotes optional).
pub fn parse_condition(s: &str) -> Result<Condition, String> {
    let (op, idx) = match (s.find("=="), s.find("!=")) {
        (Some(i), _) => (CompareOp::Eq, i),
        (None, Some(i)) => (CompareOp::Ne, i),
        (None, None) => {
            return Err("it has no `==` or `!=`. Write `path == 'value'`, e.g. \"fix/applicability == 'safe'\".".into());
        }
    };
    let path = parse_field_path(s[..idx].trim())
        .map_err(|why| format!("the path before the operator is wrong: {why}"))?;
    let raw = s[idx + 2..].trim();
    if raw.is_empty() {
        return Err(
            "the value to compare with is missing. Write e.g. `fix/applicability == 'safe'`."
                .into(),
        );
    }
    let value = raw
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .or_else(|| raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')))
        .unwrap_or(raw);
    Ok(Condition {
        path,
        op,
        value: value.to_string(),
    })
}
