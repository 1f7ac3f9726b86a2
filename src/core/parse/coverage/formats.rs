//! The three coverage report formats, read into one shape: per file as the report names it, each
//! executable line and whether a test ran it, and when the report says it was written.
//!
//! - coverage.py JSON (`coverage json`): an object with `meta` and `files`; per file
//!   `executed_lines` and `missing_lines` (excluded lines are not executable); `meta.timestamp`
//!   is the local time the report was written, without a zone.
//! - Cobertura XML (`coverage xml`, JaCoCo converters, gcovr, …): `<coverage timestamp=…>` (in
//!   milliseconds since the epoch), `<source>` folders, `<class filename=…>` with
//!   `<line number=… hits=…>`.
//! - LCOV (`coverage lcov`, c8, cargo-llvm-cov, geninfo): `SF:` starts a file's record, `DA:line,hits`
//!   lines, `end_of_record` ends it. LCOV has no time of creation, so such a report cannot be
//!   checked for staleness.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use crate::core::config::CoverageFormat;

/// Executable line (1-based) → whether a test ran it.
pub(super) type LineHits = BTreeMap<u32, bool>;

/// A report as read, before its paths are made root-relative.
#[derive(Debug, Default)]
pub(super) struct RawReport {
    /// As the report names them: relative to the tool's cwd, or absolute; Cobertura's relative
    /// names come with the `<source>` folders they may be relative to.
    pub files: Vec<(String, LineHits)>,
    /// Cobertura's `<source>` folders, in order.
    pub sources: Vec<String>,
    /// When the report was written, when it says.
    pub created: Option<SystemTime>,
}

impl CoverageFormat {
    pub(super) fn name(self) -> &'static str {
        match self {
            CoverageFormat::CoverageJson => "coverage.py JSON",
            CoverageFormat::Cobertura => "Cobertura XML",
            CoverageFormat::Lcov => "LCOV",
        }
    }
}

/// The format `text` is in, by its content: a JSON object with `files` and `meta`, an XML
/// `<coverage>` root, or `SF:` records.
pub(super) fn recognize(text: &str) -> Option<CoverageFormat> {
    let start = text.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with('{') {
        return Some(CoverageFormat::CoverageJson);
    }
    if start.starts_with('<') {
        return Some(CoverageFormat::Cobertura);
    }
    let lcov = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with("SF:") || l.starts_with("TN:"));
    lcov.then_some(CoverageFormat::Lcov)
}

pub(super) fn read(format: CoverageFormat, text: &str) -> Result<RawReport, String> {
    match format {
        CoverageFormat::CoverageJson => coverage_json(text),
        CoverageFormat::Cobertura => cobertura(text),
        CoverageFormat::Lcov => lcov(text),
    }
}

fn coverage_json(text: &str) -> Result<RawReport, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!("it is not valid JSON ({e}), so it is not a whole coverage.py JSON report")
    })?;
    let (Some(meta), Some(files)) = (
        value.get("meta").and_then(|m| m.as_object()),
        value.get("files").and_then(|f| f.as_object()),
    ) else {
        return Err("it is JSON but not a coverage.py JSON report: that is an object with `meta` and `files` (made by `coverage json`)".to_string());
    };
    let mut report = RawReport {
        created: meta
            .get("timestamp")
            .and_then(|t| t.as_str())
            .and_then(local_iso_time),
        ..Default::default()
    };
    for (name, file) in files {
        let mut hits = LineHits::new();
        for (key, ran) in [("executed_lines", true), ("missing_lines", false)] {
            let Some(list) = file.get(key).and_then(|l| l.as_array()) else {
                return Err(format!(
                    "its entry for `{name}` has no `{key}` list, so the report is not one coverage.py wrote"
                ));
            };
            for line in list {
                let line = line
                    .as_u64()
                    .and_then(|l| u32::try_from(l).ok())
                    .filter(|l| *l >= 1)
                    .ok_or_else(|| {
                        format!("its entry for `{name}` has `{line}` in `{key}`, which is not a line number")
                    })?;
                *hits.entry(line).or_default() |= ran;
            }
        }
        report.files.push((name.clone(), hits));
    }
    Ok(report)
}

fn cobertura(text: &str) -> Result<RawReport, String> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut report = RawReport::default();
    let mut by_name: BTreeMap<String, LineHits> = BTreeMap::new();
    let mut depth = 0usize;
    let mut closed = false;
    let mut class: Option<String> = None;
    let mut in_source = false;
    let mut source = String::new();
    loop {
        let event = reader.read_event().map_err(|e| {
            format!(
                "it is not well-formed XML at byte {} ({e})",
                reader.error_position()
            )
        })?;
        match event {
            Event::Start(e) if depth == 0 && !closed => {
                report.created = root(&e)?;
                depth = 1;
            }
            // `<coverage/>`: a report of nothing.
            Event::Empty(e) if depth == 0 && !closed => {
                report.created = root(&e)?;
                closed = true;
            }
            Event::Start(e) => {
                depth += 1;
                match e.name().as_ref() {
                    "class" => class = attribute(&e, "filename")?,
                    "source" => {
                        in_source = true;
                        source.clear();
                    }
                    "line" => line_element(&e, class.as_deref(), &mut by_name)?,
                    _ => {}
                }
            }
            Event::Empty(e) => match e.name().as_ref() {
                "line" => line_element(&e, class.as_deref(), &mut by_name)?,
                "class" => {
                    if let Some(name) = attribute(&e, "filename")? {
                        by_name.entry(name).or_default();
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_source => source.push_str(&t.xml10_content()),
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                match e.name().as_ref() {
                    "source" => {
                        in_source = false;
                        report.sources.push(source.trim().to_string());
                    }
                    "class" => {
                        if let Some(name) = class.take() {
                            by_name.entry(name).or_default();
                        }
                    }
                    _ => {}
                }
                if depth == 0 {
                    closed = true;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !closed {
        return Err(
            "it ends before its <coverage> element is closed: the report is truncated".to_string(),
        );
    }
    report.files = by_name.into_iter().collect();
    Ok(report)
}

/// The root element, which must be `<coverage>`; its `timestamp`.
fn root(e: &BytesStart) -> Result<Option<SystemTime>, String> {
    if e.name().as_ref() != "coverage" {
        return Err(format!(
            "it is XML but its root is <{}>, not <coverage>: it is not a Cobertura report",
            e.name().as_ref()
        ));
    }
    Ok(attribute(e, "timestamp")?
        .and_then(|t| t.trim().parse::<u64>().ok())
        .map(epoch_time))
}

fn line_element(
    e: &BytesStart,
    class: Option<&str>,
    by_name: &mut BTreeMap<String, LineHits>,
) -> Result<(), String> {
    let Some(class) = class else {
        return Ok(());
    };
    let number = attribute(e, "number")?;
    let hits = attribute(e, "hits")?;
    let (Some(number), Some(hits)) = (number, hits) else {
        return Err(format!(
            "a <line> of `{class}` lacks its `number` or `hits`, so the report is not a whole Cobertura report"
        ));
    };
    if record(by_name, class, &number, &hits).is_none() {
        return Err(format!(
            "a <line> of `{class}` has number `{number}` and hits `{:?}`, which are not counts",
            hits.trim().parse::<f64>().ok()
        ));
    }
    Ok(())
}

/// Records that line `number` of `file` ran `hits` times; `None` when they are not a line
/// number (from 1) and a count.
fn record(
    by_name: &mut BTreeMap<String, LineHits>,
    file: &str,
    number: &str,
    hits: &str,
) -> Option<()> {
    let line = number.trim().parse::<u32>().ok().filter(|l| *l >= 1)?;
    let hits = hits.trim().parse::<f64>().ok()?;
    *by_name
        .entry(file.to_string())
        .or_default()
        .entry(line)
        .or_default() |= hits > 0.0;
    Some(())
}

fn attribute(e: &BytesStart, name: &str) -> Result<Option<String>, String> {
    for attr in e.attributes() {
        let attr = attr.map_err(|err| format!("it has a malformed XML attribute ({err})"))?;
        if attr.key.as_ref() == name {
            let value = attr
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|err| format!("its `{name}` attribute cannot be read ({err})"))?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

fn lcov(text: &str) -> Result<RawReport, String> {
    let mut report = RawReport::default();
    let mut by_name: BTreeMap<String, LineHits> = BTreeMap::new();
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("SF:") {
            if let Some(open) = &current {
                return Err(format!(
                    "line {}: a record for `{name}` starts before the record of `{open}` ended with `end_of_record`",
                    i + 1
                ));
            }
            by_name.entry(name.to_string()).or_default();
            current = Some(name.to_string());
        } else if let Some(data) = line.strip_prefix("DA:") {
            let Some(file) = &current else {
                return Err(format!(
                    "line {}: `DA:` outside a file's record (no `SF:` before it)",
                    i + 1
                ));
            };
            let mut parts = data.split(',');
            let (number, hits) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            if record(&mut by_name, file, number, hits).is_none() {
                return Err(format!(
                    "line {}: `{line}` is not `DA:<line>,<hits>`",
                    i + 1
                ));
            }
        } else if line == "end_of_record" && current.take().is_none() {
            return Err(format!(
                "line {}: `end_of_record` without a record (no `SF:` before it)",
                i + 1
            ));
        }
    }
    if let Some(open) = current {
        return Err(format!(
            "the record of `{open}` has no `end_of_record`: the report is truncated"
        ));
    }
    report.files = by_name.into_iter().collect();
    Ok(report)
}

/// Milliseconds since the epoch (Cobertura), or seconds from tools that write those: a count
/// below 10^11 is read as seconds (as milliseconds it would be in 1973).
fn epoch_time(n: u64) -> SystemTime {
    if n < 100_000_000_000 {
        UNIX_EPOCH + Duration::from_secs(n)
    } else {
        UNIX_EPOCH + Duration::from_millis(n)
    }
}

/// `2026-11-26T07:37:19.735434`, a local time without a zone (coverage.py's `meta.timestamp`);
/// a zone suffix (`Z`, `+01:00`) is honoured when there is one.
pub(super) fn local_iso_time(text: &str) -> Option<SystemTime> {
    let (date, time) = text.trim().split_once(['T', ' '])?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (d.next()??, d.next()??, d.next()??);
    let (clock, zone) = match time.find(['Z', '+', '-']) {
        Some(at) => (&time[..at], Some(&time[at..])),
        None => (time, None),
    };
    let mut t = clock.split(':');
    let hour = t.next()?.parse::<i64>().ok()?;
    let minute = t.next()?.parse::<i64>().ok()?;
    let seconds = t.next().unwrap_or("0");
    let (whole, frac) = seconds.split_once('.').unwrap_or((seconds, ""));
    let second = whole.parse::<i64>().ok()?;
    let nanos = format!("{frac:0<9}").get(..9)?.parse::<u32>().ok()?;
    let epoch_seconds = match zone {
        Some(zone) => {
            days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
                - zone_offset(zone)?
        }
        // coverage.py writes its timestamp in local time.
        None => crate::core::platform::local_time_to_epoch(year, month, day, hour, minute, second)?,
    };
    let secs = u64::try_from(epoch_seconds).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

fn zone_offset(zone: &str) -> Option<i64> {
    if zone == "Z" {
        return Some(0);
    }
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let (h, m) = zone[1..].split_once(':').unwrap_or((&zone[1..], "0"));
    Some(sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60))
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_with_a_zone_are_exact() {
        let t = local_iso_time("2026-11-26T07:37:19.5Z").unwrap();
        let secs = t.duration_since(UNIX_EPOCH).unwrap();
        assert_eq!(secs.as_secs(), 1_795_678_639);
        assert_eq!(secs.subsec_millis(), 500);
        let plus = local_iso_time("2026-11-26T08:37:19.5+01:00").unwrap();
        assert_eq!(plus, t);
        assert_eq!(epoch_time(1_795_678_639_500), t);
        assert_eq!(
            epoch_time(1_795_678_639),
            UNIX_EPOCH + Duration::from_secs(1_795_678_639)
        );
    }

    #[test]
    fn formats_are_recognized_by_content() {
        assert_eq!(
            recognize(" {\"meta\":{}}"),
            Some(CoverageFormat::CoverageJson)
        );
        assert_eq!(
            recognize("<?xml version=\"1.0\"?><coverage/>"),
            Some(CoverageFormat::Cobertura)
        );
        assert_eq!(
            recognize("TN:\nSF:a.py\nend_of_record\n"),
            Some(CoverageFormat::Lcov)
        );
        assert_eq!(recognize("Name Stmts Miss Cover"), None);
    }
}
