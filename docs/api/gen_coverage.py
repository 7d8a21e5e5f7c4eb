"""Writes docs/api-coverage.md and tests/api_coverage.rs: which of JAX's public names rjax has.

Plain Python 3, no JAX: `python3 docs/api/gen_coverage.py` from the repository root (or
anywhere; paths are taken relative to this file). It reads

- `docs/api/jax_names.json`: JAX's public callable names per module (from `gen_jax_names.py`),
- `docs/api/exclusions.json`: `"module.name": "reason"` for the names that cannot apply to rjax,

and finds rjax's public functions by reading `runtime/src`: `pub fn` items of each module (also
those that a local `macro_rules!` writes as `pub fn $name`, from the `name => ...` or
`name(args) -> Ret = target;` entries of its invocations), inline and file `pub mod`s, and `pub use` re-exports (single names, lists, renames
and globs, which are followed into the module they name). A JAX name that is a Rust keyword is
looked up with a trailing underscore (`where` -> `where_`).

The generated test imports every name marked present, so a present name that disappears fails to
compile; it also checks that the document lists every JAX name and agrees with the imports.
Refuses to turn a name that the current document marks present into a missing one unless given
`--allow-removal`.
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SRC = os.path.join(ROOT, "runtime", "src")
DOC = os.path.join(ROOT, "docs", "api-coverage.md")
TEST = os.path.join(ROOT, "tests", "api_coverage.rs")

# JAX module -> rjax module path (under `rjax::`).
MODULES = {
    "jax.numpy": "jnp",
    "jax.numpy.linalg": "jnp::linalg",
    "jax.numpy.fft": "jnp::fft",
    "jax.lax": "lax",
    "jax.random": "random",
    "jax.nn": "nn",
    "jax.nn.initializers": "nn::initializers",
    "jax.scipy.special": "scipy::special",
    "jax.scipy.linalg": "scipy::linalg",
    "jax.scipy.stats": "scipy::stats",
}
STATS_PREFIX = "jax.scipy.stats."

RUST_KEYWORDS = set(
    """as break const continue crate else enum extern false fn for if impl in let loop match mod
    move mut pub ref return self Self static struct super trait true type unsafe use where while
    async await dyn abstract become box do final macro override priv typeof unsized virtual yield
    try gen""".split()
)


def rust_module(jax_module):
    if jax_module in MODULES:
        return MODULES[jax_module]
    if jax_module.startswith(STATS_PREFIX):
        return "scipy::stats::" + jax_module[len(STATS_PREFIX):]
    raise SystemExit(f"gen_coverage: no rjax module for {jax_module}")


def rust_name(name):
    return name + "_" if name in RUST_KEYWORDS else name


# ---------------------------------------------------------------------------------------------
# Reading Rust source.


def strip(text):
    """The source with comments, string and char literals blanked (braces in them would
    otherwise count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif c == "r" and re.match(r'r#*"', text[i:i + 20]) and not (
            i and (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            i = end + 1 + len(m.group(1))
            out.append('""')
        elif c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'":
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", text[i:])
            if m:
                i += len(m.group(0))
                out.append("' '")
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(text, open_at):
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced braces")


def top_level(text):
    """The text with every brace block's contents blanked, keeping the braces."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "{":
            j = matching_brace(text, i)
            out.append("{" + " " * (j - i - 1) + "}")
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def use_tree_names(tree):
    """(path, name) pairs that a `use` tree binds; name None for a glob."""
    tree = tree.strip()
    if "{" in tree:
        brace = tree.index("{")
        prefix = tree[:brace].rstrip(":").strip()
        inner = tree[brace + 1:tree.rindex("}")]
        parts, depth, cur = [], 0, ""
        for ch in inner:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "{"
            depth -= ch == "}"
            cur += ch
        parts.append(cur)
        out = []
        for part in parts:
            if part.strip():
                for path, name in use_tree_names(part):
                    out.append(((prefix + "::" + path) if prefix and path else (prefix or path), name))
        return out
    m = re.fullmatch(r"(.*?)\s+as\s+(\w+)", tree, re.S)
    if m:
        return [(m.group(1).strip(), m.group(2))]
    tree = re.sub(r"\s+", "", tree)
    if tree.endswith("::*"):
        return [(tree[:-3], None)]
    if tree == "self":
        return [("", None)]
    return [(tree, tree.split("::")[-1])]


class Module:
    def __init__(self, path, file, text):
        self.path = path  # e.g. ["jnp", "linalg"]
        self.file = file  # the file holding it (for child `mod x;` lookup)
        self.text = text  # stripped source of its body
        self.scanned = None


class Crate:
    def __init__(self, src):
        self.src = src
        self.cache = {}

    def child_file(self, module, name):
        base = os.path.dirname(module.file)
        stem = os.path.splitext(os.path.basename(module.file))[0]
        folder = base if stem in ("mod", "lib") else os.path.join(base, stem)
        for cand in (os.path.join(folder, name + ".rs"), os.path.join(folder, name, "mod.rs")):
            if os.path.exists(cand):
                return cand
        return None

    def module(self, path):
        key = tuple(path)
        if key in self.cache:
            return self.cache[key]
        if not path:
            file = os.path.join(self.src, "lib.rs")
            mod = Module([], file, strip(open(file).read()))
        else:
            parent = self.module(path[:-1])
            if parent is None:
                return None
            name = path[-1]
            top = top_level(parent.text)
            m = re.search(r"\bmod\s+" + re.escape(name) + r"\s*(\{|;)", top)
            if not m:
                mod = None
            elif m.group(1) == "{":
                open_at = m.end() - 1
                body = parent.text[open_at + 1:matching_brace(parent.text, open_at)]
                # An inline module's children live in a folder named after it.
                stem = os.path.splitext(parent.file)[0]
                folder = os.path.dirname(parent.file) if os.path.basename(stem) in ("mod", "lib") else stem
                mod = Module(path, os.path.join(folder, name + ".rs"), body)
            else:
                file = self.child_file(parent, name)
                mod = Module(path, file, strip(open(file).read())) if file else None
        self.cache[key] = mod
        return mod

    def resolve(self, module_path, use_path):
        segs = [s for s in use_path.split("::") if s]
        if not segs:
            return list(module_path)
        if segs[0] == "crate":
            base, segs = [], segs[1:]
        elif segs[0] == "self":
            base, segs = list(module_path), segs[1:]
        elif segs[0] == "super":
            base = list(module_path)
            while segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
        else:
            base = list(module_path)
        return base + segs

    def public_names(self, path, seen=None):
        """Public names (functions and re-exports; types and modules too, harmlessly) of a
        module."""
        mod = self.module(path)
        if mod is None:
            return set()
        if mod.scanned is not None:
            return mod.scanned
        seen = seen or set()
        if tuple(path) in seen:
            return set()
        seen.add(tuple(path))
        text, top = mod.text, top_level(mod.text)
        names = set()
        fn_re = r"\bpub\s+(?:const\s+|unsafe\s+|async\s+|extern\s+\"\"\s+)*fn\s+(\w+)"
        names.update(re.findall(fn_re, top))
        names.update(re.findall(r"\bpub\s+mod\s+(\w+)", top))
        # Functions written by this file's macros: `macro_rules! m { ... pub fn $name ... }`,
        # invoked as `m! { name => ..., }` or `m! { name(args) -> Ret = target; }`.
        for m in re.finditer(r"\bmacro_rules!\s*(\w+)\s*\{", top):
            body = text[m.end() - 1:matching_brace(text, m.end() - 1)]
            if not re.search(r"\bpub\s+fn\s+\$\w+", body):
                continue
            for call in re.finditer(r"\b" + re.escape(m.group(1)) + r"!\s*\{", top):
                open_at = call.end() - 1
                args = text[open_at + 1:matching_brace(text, open_at)]
                names.update(re.findall(r"(\w+)\s*=>", args))
                # Or as `m! { name(args) -> Ret = target; ... }`.
                names.update(re.findall(r"(?:^|;)\s*(\w+)\s*\(", strip(args)))
        for m in re.finditer(r"\bpub\s+use\s+([^;]*);", top):
            # `top` blanks brace contents; take the tree from the full text.
            tree = text[m.start(1):m.end(1)]
            for use_path, name in use_tree_names(tree):
                if name is not None:
                    names.add(name)
                else:
                    target = self.resolve(path, use_path)
                    names |= self.public_names(target, seen)
        mod.scanned = names
        return names


# ---------------------------------------------------------------------------------------------
# The document and the test.


def previous_present():
    if not os.path.exists(DOC):
        return set()
    present = set()
    section = None
    for line in open(DOC):
        m = re.match(r"## `(jax[\w.]*)`", line)
        if m:
            section = m.group(1)
        m = re.match(r"\| `(\w+)` \| `[\w:]+` \| present \|", line)
        if m and section:
            present.add(f"{section}.{m.group(1)}")
    return present


def main():
    allow_removal = "--allow-removal" in sys.argv[1:]
    jax = json.load(open(os.path.join(HERE, "jax_names.json")))
    exclusions = json.load(open(os.path.join(HERE, "exclusions.json")))
    crate = Crate(SRC)

    rows = {}  # jax module -> [(name, rust path, status, reason)]
    for jax_module, names in jax["modules"].items():
        rpath = rust_module(jax_module)
        have = crate.public_names(rpath.split("::"))
        if crate.module(rpath.split("::")) is None:
            have = set()
        out = []
        for name in names:
            full = f"{jax_module}.{name}"
            rname = rust_name(name)
            if full in exclusions:
                out.append((name, f"{rpath}::{rname}", "excluded", exclusions[full]))
            elif rname in have:
                out.append((name, f"{rpath}::{rname}", "present", ""))
            else:
                out.append((name, f"{rpath}::{rname}", "missing", ""))
        rows[jax_module] = out

    known = {f"{m}.{n}" for m, names in jax["modules"].items() for n in names}
    stale = sorted(set(exclusions) - known)
    if stale:
        raise SystemExit(f"gen_coverage: exclusions name what JAX does not have: {stale}")

    now_present = {f"{m}.{r[0]}" for m, rs in rows.items() for r in rs if r[2] == "present"}
    lost = sorted(previous_present() - now_present)
    if lost and not allow_removal:
        raise SystemExit(
            "gen_coverage: these names were present and are now missing (pass --allow-removal "
            f"if that is meant): {lost}"
        )

    write_doc(jax["jax_version"], rows)
    write_test(rows)
    total = {s: sum(r[2] == s for rs in rows.values() for r in rs) for s in ("present", "missing", "excluded")}
    print(f"gen_coverage: {total}")


def counts(rs):
    return {s: sum(r[2] == s for r in rs) for s in ("present", "missing", "excluded")}


def write_doc(version, rows):
    lines = [
        "# API coverage: JAX's public names in rjax",
        "",
        f"Every public callable of the JAX {version} modules that rjax mirrors, and whether rjax has",
        "it under the same name (a name that is a Rust keyword takes a trailing underscore:",
        "`jnp.where` is `rjax::jnp::where_`). Classes, dtype scalar types and type aliases are not",
        "listed. Excluded names cannot apply to rjax; each says why.",
        "",
        "Generated; do not edit. To regenerate after adding or removing a function:",
        "`python3 docs/api/gen_coverage.py` (it also rewrites `tests/api_coverage.rs`, which",
        "imports every name marked present). JAX's names come from `docs/api/jax_names.json`,",
        "written by `python -P docs/api/gen_jax_names.py` with JAX installed; exclusions and their",
        "reasons are in `docs/api/exclusions.json`.",
        "",
        "| JAX module | rjax module | present | missing | excluded | total |",
        "|---|---|---|---|---|---|",
    ]
    all_rows = [r for rs in rows.values() for r in rs]
    for jax_module, rs in rows.items():
        c = counts(rs)
        lines.append(
            f"| [`{jax_module}`](#{anchor(jax_module)}) | `rjax::{rust_module(jax_module)}` | "
            f"{c['present']} | {c['missing']} | {c['excluded']} | {len(rs)} |"
        )
    c = counts(all_rows)
    lines.append(f"| all | | {c['present']} | {c['missing']} | {c['excluded']} | {len(all_rows)} |")
    for jax_module, rs in rows.items():
        c = counts(rs)
        lines += [
            "",
            f"## `{jax_module}`",
            "",
            f"`rjax::{rust_module(jax_module)}`: {c['present']} present, {c['missing']} missing, "
            f"{c['excluded']} excluded, of {len(rs)}.",
            "",
            "| JAX name | rjax | status |",
            "|---|---|---|",
        ]
        for name, rpath, status, reason in rs:
            text = f"excluded: {reason}" if status == "excluded" else status
            lines.append(f"| `{name}` | `{rpath}` | {text} |")
    with open(DOC, "w") as f:
        f.write("\n".join(lines) + "\n")


def anchor(jax_module):
    return jax_module.replace(".", "")


def write_test(rows):
    lines = [
        "//! Generated by `docs/api/gen_coverage.py` from `docs/api/jax_names.json`; do not edit.",
        "//!",
        "//! Every JAX name that `docs/api-coverage.md` marks present is imported here, so one that",
        "//! disappears from rjax fails to compile; the test checks that the document lists every",
        "//! JAX name once and marks present exactly the names imported here.",
        "",
    ]
    present = []
    for jax_module, rs in rows.items():
        rpath = rust_module(jax_module)
        names = sorted({r[1].split("::")[-1] for r in rs if r[2] == "present"})
        present += [f"{jax_module}.{r[0]}" for r in rs if r[2] == "present"]
        if not names:
            continue
        mod_name = "m_" + jax_module.replace(".", "_")
        lines += [
            f"mod {mod_name} {{",
            "    #[allow(unused_imports)]",
            f"    use rjax::{rpath}::{{{', '.join(names)}}};",
            "}",
            "",
        ]
    lines += [
        "/// The names imported above, as `jax_module.name`.",
        "const PRESENT: &[&str] = &[",
    ]
    lines += [f'    "{p}",' for p in present]
    lines += [
        "];",
        "",
        "/// `(jax module, name, status)` for each row of the document's module tables.",
        "fn doc_rows(doc: &str) -> Vec<(String, String, String)> {",
        "    let mut section = None;",
        "    let mut rows = Vec::new();",
        "    for line in doc.lines() {",
        '        if let Some(rest) = line.strip_prefix("## `") {',
        "            section = Some(rest.trim_end_matches('`').to_string());",
        "            continue;",
        "        }",
        "        let cells: Vec<&str> = line.split('|').map(str::trim).collect();",
        "        if let (Some(module), 5) = (&section, cells.len()) {",
        "            if let Some(name) = cells[1].strip_prefix('`').and_then(|c| c.strip_suffix('`')) {",
        "                let status = cells[3].split(':').next().unwrap().to_string();",
        "                rows.push((module.clone(), name.to_string(), status));",
        "            }",
        "        }",
        "    }",
        "    rows",
        "}",
        "",
        "#[test]",
        "fn coverage_doc_lists_every_jax_name_and_agrees_with_the_imports() {",
        '    let doc = include_str!("../docs/api-coverage.md");',
        '    let names: serde_json::Value =',
        '        serde_json::from_str(include_str!("../docs/api/jax_names.json")).unwrap();',
        "    let rows = doc_rows(doc);",
        "    let mut listed: Vec<String> = rows.iter().map(|(m, n, _)| format!(\"{m}.{n}\")).collect();",
        "    let mut expected: Vec<String> = names[\"modules\"]",
        "        .as_object()",
        "        .unwrap()",
        "        .iter()",
        "        .flat_map(|(m, ns)| {",
        "            ns.as_array().unwrap().iter().map(move |n| format!(\"{m}.{}\", n.as_str().unwrap()))",
        "        })",
        "        .collect();",
        "    listed.sort();",
        "    expected.sort();",
        "    assert_eq!(listed, expected, \"docs/api-coverage.md is stale: run docs/api/gen_coverage.py\");",
        "    let mut present: Vec<String> = rows",
        "        .iter()",
        "        .filter(|(_, _, s)| s == \"present\")",
        "        .map(|(m, n, _)| format!(\"{m}.{n}\"))",
        "        .collect();",
        "    let mut imported: Vec<String> = PRESENT.iter().map(|s| s.to_string()).collect();",
        "    present.sort();",
        "    imported.sort();",
        "    assert_eq!(present, imported, \"docs/api-coverage.md is stale: run docs/api/gen_coverage.py\");",
        "    let exclusions: serde_json::Value =",
        '        serde_json::from_str(include_str!("../docs/api/exclusions.json")).unwrap();',
        "    let excluded = rows.iter().filter(|(_, _, s)| s == \"excluded\").count();",
        "    assert_eq!(excluded, exclusions.as_object().unwrap().len());",
        "    assert!(rows.iter().all(|(_, _, s)| [\"present\", \"missing\", \"excluded\"].contains(&s.as_str())));",
        "}",
    ]
    with open(TEST, "w") as f:
        f.write("\n".join(lines) + "\n")
    # Formatted as `cargo fmt` would, so that regenerating leaves no diff.
    try:
        subprocess.run(["rustfmt", "--edition", "2021", TEST], check=True)
    except FileNotFoundError:
        print("gen_coverage: rustfmt not found; run `cargo fmt` on tests/api_coverage.rs")


if __name__ == "__main__":
    main()
