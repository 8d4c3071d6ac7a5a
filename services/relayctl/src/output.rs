//! Plain-text output: aligned tables, short times, one line per event.

use crate::error::Result;
use relay_contracts::events::Event;

/// `--json`: the reply as it came.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    json(value);
    Ok(())
}

/// Prints rows under headers, each column as wide as its widest cell.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}", w = *w))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(headers.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    if rows.is_empty() {
        println!("(none)");
    }
}

/// Unix ms as `YYYY-MM-DD HH:MM:SS` UTC.
pub fn time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = relay_bus::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// A contract enum as it is spelled on the wire (`next-tool-call`, not `NextToolCall`).
pub fn wire<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

pub fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

/// `seq  time  type  session  agent  payload`, the payload cut to keep one line.
pub fn event_line(e: &Event) -> String {
    let mut payload = e.payload.to_string();
    if payload.chars().count() > 160 {
        payload = payload.chars().take(157).collect::<String>() + "...";
    }
    format!(
        "{:>8}  {}  {:<22}  {}  {}  {}",
        e.seq,
        time(e.ts),
        e.event_type,
        opt(&e.session_id),
        e.agent_name
            .as_ref()
            .or(e.agent_id.as_ref())
            .map_or("-", |s| s.as_str()),
        payload
    )
}

pub fn json<T: serde::Serialize>(value: &T) {
    println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::time;

    #[test]
    fn enums_print_as_on_the_wire() {
        use relay_contracts::capabilities::DeliveryMode;
        assert_eq!(super::wire(&DeliveryMode::NextToolCall), "next-tool-call");
    }

    #[test]
    fn times_are_utc_dates() {
        assert_eq!(time(0), "1970-01-01 00:00:00");
        assert_eq!(time(1_795_000_000_000), "2026-11-18 11:06:40");
        assert_eq!(time(951_782_400_000), "2000-02-29 00:00:00");
    }
}
