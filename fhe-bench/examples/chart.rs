//! Renders result files (or every `*.json` under a folder) into one SVG chart:
//! `cargo run -p fhe-bench --example chart -- OUT.svg FILE_OR_DIR...`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).map(PathBuf::from);
    let out = args.next().ok_or("usage: chart OUT.svg FILE_OR_DIR...")?;
    let mut files = Vec::new();
    for a in args {
        if a.is_dir() {
            files.extend(fhe_bench::result_files(&a)?);
        } else {
            files.push(a);
        }
    }
    fhe_bench::render_chart(&files, &out)?;
    println!("wrote {} from {} files", out.display(), files.len());
    Ok(())
}
