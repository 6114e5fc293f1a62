//! Plain-text tables of reports and ratios.

use crate::report::{Ratio, Report, Row};

/// A duration in nanoseconds with a readable unit: `850 ns`, `64.4 µs`, `1.76 ms`, `2.10 s`.
pub fn format_ns(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if unit == "ns" || value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {unit}")
}

/// A text table: `header`, then `lines`, columns padded to their widest cell (`right`:
/// right-aligned), two spaces apart.
pub fn render(header: &[&str], right: &[bool], lines: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for l in lines {
        for (w, cell) in width.iter_mut().zip(l) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let fmt_line = |cells: &[String]| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = width[i] - cell.chars().count();
            if i > 0 {
                s.push_str("  ");
            }
            if right[i] {
                s.extend(std::iter::repeat_n(' ', pad));
                s.push_str(cell);
            } else {
                s.push_str(cell);
                if i + 1 < cells.len() {
                    s.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        let mut s = s.trim_end().to_string();
        s.push('\n');
        s
    };
    let mut out = fmt_line(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    out.push_str(&fmt_line(&width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>()));
    for l in lines {
        out.push_str(&fmt_line(l));
    }
    out
}

fn row_cells(r: &Row) -> Vec<String> {
    vec![
        r.operation.clone(),
        r.param_set.clone(),
        r.backend.clone(),
        r.batch_size.to_string(),
        format!("{}x{}", r.iterations, r.runs),
        format_ns(r.stats.median_ns),
        format_ns(r.stats.p99_ns),
        format!("{:.1}%", r.stats.cv * 100.0),
        match &r.circuit {
            // An integer operation: the cost per gate of its circuit.
            Some(c) if c.gates > 0 => format!("{}/gate", format_ns(r.stats.median_ns / c.gates as f64)),
            _ if r.batch_size > 1 => format_ns(r.per_item_median_ns),
            _ => String::new(),
        },
    ]
}

/// A table of `report`: one line per row with median and p99 (and CV, per-item median
/// for batches), under a header line naming the lane, backend, machine and gate status.
pub fn format_table(report: &Report) -> String {
    let env = &report.environment;
    let mut out = format!(
        "lane {} | backend {} | {} ({} cores) | {} | commit {} | {} | equivalence gate: {:?}\n",
        report.lane,
        report.backend,
        env.machine(),
        env.cores,
        env.rustc_version,
        env.commit_label(),
        env.date_utc,
        report.equivalence_gate.status,
    );
    if report.rows.is_empty() {
        out.push_str("(no rows)\n");
        return out;
    }
    let header = ["operation", "params", "backend", "batch", "iters", "median", "p99", "cv", "per item"];
    let right = [false, false, false, true, true, true, true, true, true];
    out.push_str(&render(&header, &right, &report.rows.iter().map(row_cells).collect::<Vec<_>>()));
    out
}

/// A table of ratios (ours over theirs, below 1 is faster).
pub fn format_ratios(ratios: &[Ratio]) -> String {
    let mut header = vec!["operation", "params", "batch", "ours", "theirs", "ours median", "theirs median", "ratio"];
    let mut right = vec![false, false, true, false, false, true, true, true];
    // Interleaved pairs get the median of their per-round ratios beside the pooled one.
    let per_round = ratios.iter().any(|r| r.per_round.is_some());
    if per_round {
        header.push("per round");
        right.push(true);
    }
    let lines: Vec<Vec<String>> = ratios
        .iter()
        .map(|r| {
            let mut line = vec![
                r.operation.clone(),
                r.param_set.clone(),
                r.batch_size.to_string(),
                r.ours_backend.clone(),
                r.theirs_backend.clone(),
                format_ns(r.ours_median_ns),
                format_ns(r.theirs_median_ns),
                format!("{:.2}x", r.ratio),
            ];
            if per_round {
                line.push(r.per_round.map_or_else(|| "-".to_string(), |x| format!("{x:.2}x")));
            }
            line
        })
        .collect();
    render(&header, &right, &lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(format_ns(850.0), "850 ns");
        assert_eq!(format_ns(64_400.0), "64.4 µs");
        assert_eq!(format_ns(1_759_100.0), "1.76 ms");
        assert_eq!(format_ns(2.1e9), "2.10 s");
        assert_eq!(format_ns(173_400.0), "173 µs");
    }
}
