//! Fields a tool did not print (`defaults`) and fields rebuilt from what it printed
//! (`templates`), both rendered from the values read.

use std::borrow::Cow;

use super::RawViolation;
use crate::core::config::{Defaults, Template, Templates};

/// The values read, by field name, for rendering placeholders.
struct Fields<'v> {
    v: RawViolation<'v>,
    nums: [Option<String>; 4],
}

impl<'v> Fields<'v> {
    fn of(v: &RawViolation<'v>) -> Self {
        Fields {
            nums: [v.line, v.column, v.end_line, v.end_column].map(|n| n.map(|n| n.to_string())),
            v: v.clone(),
        }
    }

    fn get(&self, f: &str) -> Option<&str> {
        let v = &self.v;
        match f {
            "file" => v.file.as_deref(),
            "line" => self.nums[0].as_deref(),
            "column" => self.nums[1].as_deref(),
            "end_line" => self.nums[2].as_deref(),
            "end_column" => self.nums[3].as_deref(),
            "code" => v.code.as_deref(),
            "message" => v.message.as_deref(),
            "severity" => v.severity.as_deref(),
            "url" => v.url.as_deref(),
            _ => None,
        }
    }

    fn render(&self, t: &Template) -> String {
        t.render(|f| self.get(f))
    }

    fn has_all(&self, t: &Template) -> bool {
        t.fields()
            .all(|f| self.get(f).is_some_and(|s| !s.is_empty()))
    }
}

/// Fills what the field map did not find. Placeholders are rendered from the values the map
/// found, before any default is applied, so the result does not depend on the order of fields.
pub(super) fn apply_defaults(v: &mut RawViolation<'_>, d: &Defaults) {
    let missing =
        |field: &Option<Cow<'_, str>>, t: &Option<Template>| field.is_none() && t.is_some();
    if !(missing(&v.file, &d.file)
        || missing(&v.code, &d.code)
        || missing(&v.message, &d.message)
        || missing(&v.url, &d.url)
        || (v.severity.is_none() && d.severity.is_some()))
    {
        return;
    }
    let read = Fields::of(v);
    let fill = |field: &mut Option<Cow<'_, str>>, t: &Option<Template>| {
        if field.is_none()
            && let Some(t) = t
        {
            *field = Some(Cow::Owned(read.render(t)));
        }
    };
    fill(&mut v.file, &d.file);
    fill(&mut v.code, &d.code);
    fill(&mut v.message, &d.message);
    fill(&mut v.url, &d.url);
    if v.severity.is_none() {
        v.severity = d.severity.map(|s| Cow::Borrowed(s.as_str()));
    }
}

/// Rebuilds the fields `t` names from the values read (all read before any is rebuilt). A
/// template whose placeholders were not all read leaves its field as it was.
pub(super) fn apply_templates(v: &mut RawViolation<'_>, t: &Templates) {
    if t.code.is_none() && t.message.is_none() && t.url.is_none() {
        return;
    }
    let read = Fields::of(v);
    let rebuild = |field: &mut Option<Cow<'_, str>>, t: &Option<Template>| {
        if let Some(t) = t
            && read.has_all(t)
        {
            *field = Some(Cow::Owned(read.render(t)));
        }
    };
    rebuild(&mut v.code, &t.code);
    rebuild(&mut v.message, &t.message);
    rebuild(&mut v.url, &t.url);
}
