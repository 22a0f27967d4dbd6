//! "### Machine": what the benchmarks ran on (`machine.json`).

pub use squall_bench_schema::machine::Machine;

use crate::format::num;
use crate::table::{not_run, table};

/// "### Machine": what the benchmarks ran on.
pub fn machine_section(machine: Option<&Machine>) -> String {
    let mut out = String::from("### Machine\n\n");
    let Some(m) = machine else {
        out.push_str(&not_run("machine.json"));
        return out;
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut add = |key: &str, value: Option<String>| {
        if let Some(v) = value {
            rows.push(vec![key.to_string(), v]);
        }
    };
    add("CPU", m.cpu.clone());
    add("cores", m.cores.map(|c| c.to_string()));
    add("memory", m.memory_gib.map(|g| format!("{} GiB", num(g))));
    add("OS", m.os.clone());
    add("Rust", m.rustc.clone());
    add("OpenSearch", m.opensearch.clone());
    add("OpenSearch heap", m.heap.clone());
    add("date", m.date.clone());
    add("command", m.command.as_ref().map(|c| format!("`{c}`")));
    add(
        "mode",
        m.quick
            .map(|q| if q { "quick (small sizes)" } else { "full" }.to_string()),
    );
    if rows.is_empty() {
        out.push_str("`machine.json` records nothing.\n");
    } else {
        out.push_str(&table(&["", ""], &rows));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse;

    #[test]
    fn machine_table() -> anyhow::Result<()> {
        let m: Machine = parse(r#"{"cpu":"AMD EPYC","cores":2,"memory_gib":23.4,"quick":false}"#)?;
        let md = machine_section(Some(&m));
        assert!(md.contains("| CPU | AMD EPYC |"), "{md}");
        assert!(md.contains("| memory | 23.4 GiB |"), "{md}");
        assert!(md.contains("| mode | full |"), "{md}");
        assert!(!md.contains("OpenSearch"), "{md}");
        Ok(())
    }
}
