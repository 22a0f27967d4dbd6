//! Number formatting shared by the tables and the plots.

use crate::input::Spread;

/// Shown where there is no measurement.
pub const NONE: &str = "–";

/// Formats an integer with thousands separators: `1000000` → `1,000,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats an index size: exact millions as `5 M`, anything else with separators.
pub fn size(n: u64) -> String {
    if n > 0 && n.is_multiple_of(1_000_000) {
        format!("{} M", n / 1_000_000)
    } else {
        thousands(n)
    }
}

/// Formats a measured value with about three significant figures,
/// using thousands separators from 1,000 up.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return NONE.to_string();
    }
    let a = x.abs();
    if a >= 999.5 {
        let rounded = x.round();
        let sign = if rounded < 0.0 { "-" } else { "" };
        // Saturating float-to-int conversion is fine for display.
        format!("{sign}{}", thousands(rounded.abs() as u64))
    } else if a >= 99.95 {
        format!("{x:.0}")
    } else if a >= 9.995 {
        format!("{x:.1}")
    } else if a >= 0.9995 || a == 0.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// Formats a setting (not a measurement) without trailing zeros: `0.5`, `20`.
pub fn setting(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        thousands_signed(x as i64)
    } else {
        let s = format!("{x}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Formats a signed integer with thousands separators.
fn thousands_signed(n: i64) -> String {
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", thousands(n.unsigned_abs()))
}

/// `1 run`, `3 runs`: a count and its noun, plural unless 1.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", thousands(n))
    }
}

/// Formats a spread as `median (min–max)`.
pub fn spread(s: &Spread) -> String {
    format!("{} ({}–{})", num(s.median), num(s.min), num(s.max))
}

/// Formats an optional spread, `–` when absent.
pub fn opt_spread(s: Option<&Spread>) -> String {
    s.map_or_else(|| NONE.to_string(), spread)
}

/// Formats a ratio with two decimals, `–` when absent or not finite.
pub fn ratio(r: Option<f64>) -> String {
    match r {
        Some(r) if r.is_finite() => format!("{r:.2}"),
        _ => NONE.to_string(),
    }
}

/// Divides two medians, `None` when either is missing or the divisor is not positive.
pub fn divide(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() && b.is_finite() => Some(a / b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(size(5_000_000), "5 M");
        assert_eq!(size(20_000), "20,000");
        assert_eq!(num(12345.6), "12,346");
        assert_eq!(num(99.46), "99.5");
        assert_eq!(num(0.54321), "0.543");
        assert_eq!(num(f64::NAN), NONE);
        assert_eq!(setting(0.5), "0.5");
        assert_eq!(setting(2000.0), "2,000");
        assert_eq!(setting(0.500012), "0.500012");
        assert_eq!(ratio(Some(0.9546)), "0.95");
        assert_eq!(divide(Some(1.0), Some(0.0)), None);
        assert_eq!(count(1, "run"), "1 run");
        assert_eq!(count(3, "run"), "3 runs");
    }
}
