//! The rooms of `src/` import one way: `ARCHITECTURE.md`'s table lists them bottom-up, each
//! row's "may touch" column names rooms of earlier rows only, and every `crate::` path in a
//! room's code (tests included) names itself or a room its row allows.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One row of the table: the rooms it holds and the rooms they may touch.
struct Row {
    rooms: Vec<String>,
    may_touch: BTreeSet<String>,
}

/// The names between backquotes in `text`, outside parentheses (which qualify a name:
/// "`functions` (`to_json`)" allows `functions`).
fn quoted_names(text: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The room of a path under `src/`: its first component without `.rs`.
fn room_of(path: &str) -> Option<String> {
    let rest = path.strip_prefix("src/")?;
    let first = rest.split('/').next()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// The table's rows for `src/`, in order, with "everything above" and "the public API" read as
/// every earlier room.
fn rows() -> Vec<Row> {
    let text = fs::read_to_string(Path::new(ROOT).join("ARCHITECTURE.md")).unwrap();
    let mut rows: Vec<Row> = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| `src/")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        assert_eq!(cells.len(), 3, "a row of three cells: {line}");
        let rooms: Vec<String> = quoted_names(cells[0])
            .iter()
            .filter_map(|p| room_of(p))
            .collect();
        let earlier: BTreeSet<String> = rows.iter().flat_map(|r| r.rooms.clone()).collect();
        let touch = cells[2].trim();
        let may_touch = if touch == "everything above" || touch == "the public API" {
            earlier.clone()
        } else if touch.starts_with("nothing") {
            BTreeSet::new()
        } else {
            quoted_names(touch)
                .iter()
                .map(|n| n.split("::").next().unwrap().to_string())
                .collect()
        };
        for allowed in &may_touch {
            assert!(
                earlier.contains(allowed),
                "{rooms:?} may touch `{allowed}`, which is not a room above it in the table"
            );
        }
        rows.push(Row { rooms, may_touch });
    }
    rows
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The rooms named by `crate::<room>` in the code of `source` (comments left out).
fn crate_paths(source: &str) -> BTreeSet<String> {
    let mut rooms = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap();
        for (at, _) in code.match_indices("crate::") {
            // `$crate::` and names ending in `crate` (`datafusion_crate::`) are not ours
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            rooms.insert(name);
        }
    }
    rooms
}

#[test]
fn rooms_import_only_the_rooms_below_them() {
    let rows = rows();
    let allowed: BTreeMap<&str, &BTreeSet<String>> = rows
        .iter()
        .flat_map(|r| {
            r.rooms
                .iter()
                .map(move |room| (room.as_str(), &r.may_touch))
        })
        .collect();
    // the crate root's items, which `crate::` may name: the public functions of `register`
    let root_items = ["register_all", "register_all_with_state", "session_context"];
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("src"), &mut files);
    assert!(files.len() > 50, "{} files", files.len());
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(ROOT)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if relative == "src/lib.rs" {
            continue;
        }
        let room = room_of(&relative).unwrap();
        let Some(may_touch) = allowed.get(room.as_str()) else {
            wrong.push(format!(
                "{relative}: room `{room}` has no row in ARCHITECTURE.md"
            ));
            continue;
        };
        for named in crate_paths(&fs::read_to_string(file).unwrap()) {
            let named = if root_items.contains(&named.as_str()) {
                "register".to_string()
            } else {
                named
            };
            if named != room && !may_touch.contains(&named) {
                wrong.push(format!("{relative}: `{room}` imports `crate::{named}`"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn comments_and_other_crates_are_not_read_as_imports() {
    let source = "use crate::codec::Variant; // crate::parquet\n\
                  /// [`x`](crate::sql)\n\
                  let y = $crate::functions::x; other_crate::cast::y(); crate::register_all();";
    let found: Vec<String> = crate_paths(source).into_iter().collect();
    assert_eq!(found, ["codec", "register_all"]);
    assert_eq!(
        quoted_names("`functions` (`to_json`), `cast` (type names)"),
        ["functions", "cast"]
    );
}

/// The sibling modules (files of the same folder, `mod.rs` aside) that the code of `source`
/// names: `super::x`, `super::{x, y::z}` (over several lines too), `crate::<module>::x` where
/// `module` is the folder's module path (comments and the tests at the file's end left out).
fn sibling_paths(source: &str, module: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = source
        .lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let mut named = BTreeSet::new();
    let mut take = |text: &str| {
        let name: String = text
            .trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if siblings.contains(&name) {
            named.insert(name);
        }
    };
    // the files at a crate's root (module "") name each other as `crate::x`
    let own_module = match module {
        "" => "crate::".to_string(),
        _ => format!("crate::{module}::"),
    };
    for prefix in ["super::", own_module.as_str()] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            let Some(group) = rest.strip_prefix('{') else {
                take(rest);
                continue;
            };
            // a group: each top-level name in it
            let (mut depth, mut start) = (0, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        take(&group[start..i]);
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        take(&group[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        }
    }
    named
}

/// The files of `folder` (module path `module`, "" for a crate's root) that import each other,
/// and those of its subfolders.
fn cycles_in(folder: &Path, module: &str, cycles: &mut Vec<String>) {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let inner = match module {
                "" => stem,
                _ => format!("{module}::{stem}"),
            };
            cycles_in(&path, &inner, cycles);
        } else if path.extension().is_some_and(|x| x == "rs")
            && !["mod", "lib", "main"].contains(&stem.as_str())
        {
            files.insert(stem, fs::read_to_string(&path).unwrap());
        }
    }
    let siblings: BTreeSet<String> = files.keys().cloned().collect();
    let edges: BTreeMap<&String, BTreeSet<String>> = files
        .iter()
        .map(|(name, source)| (name, sibling_paths(source, module, &siblings)))
        .collect();
    for (a, named) in &edges {
        for b in named {
            if b.as_str() > a.as_str() && edges[&b].contains(*a) {
                cycles.push(format!("{}/{a}.rs <-> {b}.rs", folder.display()));
            }
        }
    }
}

/// No two files of a room import each other: a helper both need lives where both take it from.
#[test]
fn no_two_files_import_each_other() {
    let mut cycles = Vec::new();
    for entry in fs::read_dir(Path::new(ROOT).join("src")).unwrap() {
        let folder = entry.unwrap().path();
        if folder.is_dir() {
            let module = folder.file_name().unwrap().to_string_lossy().into_owned();
            cycles_in(&folder, &module, &mut cycles);
        }
    }
    // the program's crate, whose modules are files at its root
    cycles_in(&Path::new(ROOT).join("variant-sql/src"), "", &mut cycles);
    assert!(
        cycles.is_empty(),
        "files that import each other:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn sibling_imports_are_read_in_groups() {
    let siblings: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let source = "use super::{\n    a::X,\n    b,\n};\nuse crate::room::c::Y; // super::d\nsuper::z();\n\
                  #[cfg(test)]\nmod tests { use super::super::d; }";
    let found: Vec<String> = sibling_paths(source, "room", &siblings)
        .into_iter()
        .collect();
    assert_eq!(found, ["a", "b", "c"]);
}
