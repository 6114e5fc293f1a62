//! An SVG chart comparing backends and lanes: one group of bars per
//! `(operation, parameter set, batch size)`, one bar per `lane/backend`, bar height the
//! median on a log scale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{Error, Result};
use crate::ops::tfhe::Operation;
use crate::report::Report;
use crate::schema::load_report;
use crate::table::format_ns;

/// Reads (and validates) `result_files` and renders their medians to `out_path` as SVG.
pub fn render_chart(result_files: &[PathBuf], out_path: &Path) -> Result<()> {
    let reports = result_files.iter().map(|p| load_report(p)).collect::<Result<Vec<_>>>()?;
    render_chart_reports(&reports, out_path)
}

/// The folder under `bench/results/` that holds `recommend ntt` files, which are not
/// bench result files (their own schema, `bench/recommend.schema.json`).
pub const RECOMMEND_DIR: &str = "recommend";

/// The folder under `bench/results/` that holds the OpenFHE peer's baseline files
/// (`fhe-bench/peers/openfhe/baseline.py`), which are not bench result files.
pub const OPENFHE_DIR: &str = "openfhe";

/// The folder under `bench/results/` that holds the Python package's measurements
/// (`fhe-py/bench/overhead.py`, `fhe-py/examples/ray_batch.py`), not bench result files.
pub const PYTHON_DIR: &str = "python";

/// The folder under `bench/results/` that holds the radix-integer measurements
/// (`fhe-bench/examples/radix_vs_tfhe.rs`, `fhe-schemes/examples/radix_timing.rs`),
/// not bench result files.
pub const RADIX_DIR: &str = "radix";

/// Every `*.json` file under `dir` (recursively, skipping the [`RECOMMEND_DIR`],
/// [`OPENFHE_DIR`], [`PYTHON_DIR`] and [`RADIX_DIR`] folders), sorted: the input of a
/// chart over a whole `bench/results/` tree.
pub fn result_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(Error::io(&d))? {
            let path = entry.map_err(Error::io(&d))?.path();
            if path.is_dir() {
                if path
                    .file_name()
                    .is_some_and(|n| [RECOMMEND_DIR, OPENFHE_DIR, PYTHON_DIR, RADIX_DIR].iter().any(|d| n == *d))
                {
                    continue;
                }
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Group key: operation order first (known operations in report order), then
/// parameter set, then batch size.
type GroupKey = (usize, String, String, usize);

struct ChartData {
    groups: Vec<(GroupKey, String)>,
    series: Vec<String>,
    /// `(group index, series index) -> (median_ns, date of its report)`.
    values: BTreeMap<(usize, usize), (f64, String)>,
}

fn collect(reports: &[Report]) -> ChartData {
    let mut groups: BTreeMap<GroupKey, String> = BTreeMap::new();
    let mut series: Vec<String> = Vec::new();
    for rep in reports {
        for row in &rep.rows {
            let order = row.operation.parse::<Operation>().map(|o| o as usize).unwrap_or(usize::MAX);
            let key = (order, row.operation.clone(), row.param_set.clone(), row.batch_size);
            let label = if row.batch_size > 1 {
                format!("{} {} x{}", row.operation, row.param_set, row.batch_size)
            } else {
                format!("{} {}", row.operation, row.param_set)
            };
            groups.entry(key).or_insert(label);
            let s = format!("{}/{}", rep.lane, row.backend);
            if !series.contains(&s) {
                series.push(s);
            }
        }
    }
    let groups: Vec<(GroupKey, String)> = groups.into_iter().collect();
    let mut values = BTreeMap::new();
    for rep in reports {
        for row in &rep.rows {
            let g = groups
                .iter()
                .position(|(k, _)| k.1 == row.operation && k.2 == row.param_set && k.3 == row.batch_size)
                .expect("every row's group was collected");
            let s = series.iter().position(|s| *s == format!("{}/{}", rep.lane, row.backend)).expect("collected");
            // Several files for one bar: the newest report wins.
            let date = rep.environment.date_utc.clone();
            let newer = values.get(&(g, s)).is_none_or(|(_, d): &(f64, String)| *d <= date);
            if newer && row.stats.median_ns > 0.0 {
                values.insert((g, s), (row.stats.median_ns, date));
            }
        }
    }
    ChartData { groups, series, values }
}

/// [`render_chart`] on reports already in memory.
pub fn render_chart_reports(reports: &[Report], out_path: &Path) -> Result<()> {
    let data = collect(reports);
    if data.values.is_empty() {
        return Err(Error::Chart("no rows with a positive median to chart".into()));
    }
    let (lo, hi) = data.values.values().fold((f64::MAX, 0f64), |(lo, hi), (v, _)| (lo.min(*v), hi.max(*v)));
    // Headroom above the tallest bar (log scale) for the legend.
    let (lo, hi) = (lo / 2.0, hi * 10f64.powf(1.0 + 0.15 * data.series.len() as f64));
    let n_groups = data.groups.len();
    let n_series = data.series.len();
    let width = (160 + n_groups * (16 + 14 * n_series)).max(900) as u32;
    let height = 760u32;
    if let Some(parent) = out_path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(Error::io(parent))?;
    }

    let chart_err = |e: &dyn std::fmt::Display| Error::Chart(e.to_string());
    {
        let root = SVGBackend::new(out_path, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| chart_err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Lux FHE: median latency per call (log scale)", ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(210)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5f64..(n_groups as f64 - 0.5), (lo..hi).log_scale())
            .map_err(|e| chart_err(&e))?;

        let y_fmt = |y: &f64| format_ns(*y);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&y_fmt)
            .y_desc("median per call")
            .draw()
            .map_err(|e| chart_err(&e))?;

        // Group labels, drawn by hand: rotated, starting just under each group's centre.
        let label_style = TextStyle::from(("sans-serif", 13).into_font().transform(FontTransform::Rotate90))
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (g, (_, label)) in data.groups.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(g as f64, lo));
            root.draw(&Text::new(label.clone(), (px, py + 8), label_style.clone())).map_err(|e| chart_err(&e))?;
        }

        let slot = 0.8 / n_series as f64;
        for (s, name) in data.series.iter().enumerate() {
            let color = Palette99::pick(s).to_rgba();
            let bars: Vec<Rectangle<(f64, f64)>> = data
                .values
                .iter()
                .filter(|((_, si), _)| *si == s)
                .map(|((g, _), (v, _))| {
                    let x0 = *g as f64 - 0.4 + s as f64 * slot;
                    Rectangle::new([(x0, lo), (x0 + slot * 0.92, *v)], color.filled())
                })
                .collect();
            chart
                .draw_series(bars)
                .map_err(|e| chart_err(&e))?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| chart_err(&e))?;
        root.present().map_err(|e| chart_err(&e))?;
    }
    tracing::info!(path = %out_path.display(), groups = n_groups, series = n_series, "wrote bench chart");
    Ok(())
}
