//! Which bindings each entry point of a WGSL module uses: what a pipeline layout of that entry point
//! alone must hold. WebGPU counts a layout's storage buffers against `maxStorageBuffersPerShaderStage`
//! (8 by default, what a browser grants a page), and a kernel file's shared layout binds the union of
//! its kernels' buffers; a layout per kernel with only its own fits where the union does not
//! ([`crate::gpu::base::pipelines::build_specialized`]).
//!
//! A scan of the source, not a compiler: it finds the module-scope `@group(g) @binding(b) var` names,
//! the functions and the `@compute` entry points, and follows the calls from each entry point. A
//! name that a function declares locally and that is also a binding's counts as a use of the binding,
//! so the answer can only be too large (a layout with a binding the kernel does not touch is valid),
//! never too small. A test holds it to naga's own analysis on every kernel file (`tests/shaders.rs`).

use std::collections::{BTreeSet, HashMap};

/// A binding: (`@group`, `@binding`).
pub type Slot = (u32, u32);

/// The bindings of each entry point of `src`, by entry point name.
pub fn entry_point_uses(src: &str) -> HashMap<String, BTreeSet<Slot>> {
    let stripped = strip_comments(src);
    let tokens = tokenize(&stripped);
    let mut globals: HashMap<&str, Slot> = HashMap::new();
    let mut functions: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut entry_points: Vec<&str> = Vec::new();
    let mut i = 0;
    let (mut group, mut binding, mut compute) = (None, None, false);
    while i < tokens.len() {
        match tokens[i] {
            "@" if i + 1 < tokens.len() => {
                let attr = tokens[i + 1];
                let value = if tokens.get(i + 2) == Some(&"(") { tokens.get(i + 3).and_then(|t| parse_u32(t)) } else { None };
                match attr {
                    "group" => group = value,
                    "binding" => binding = value,
                    "compute" => compute = true,
                    _ => {}
                }
                i += 2;
            }
            "var" => {
                // var<space, access> name: type;  the name follows the closing `>` (or `var` itself)
                let mut j = i + 1;
                if tokens.get(j) == Some(&"<") {
                    while j < tokens.len() && tokens[j] != ">" {
                        j += 1;
                    }
                    j += 1;
                }
                if let (Some(g), Some(b), Some(name)) = (group, binding, tokens.get(j)) {
                    globals.insert(name, (g, b));
                }
                (group, binding, compute) = (None, None, false);
                i = skip_item(&tokens, j);
            }
            "fn" if i + 1 < tokens.len() => {
                let name = tokens[i + 1];
                let mut j = i + 2;
                while j < tokens.len() && tokens[j] != "{" {
                    j += 1;
                }
                let (body, end) = block(&tokens, j);
                // identifiers, but not a struct member's name after `.`
                let names = body.iter().enumerate().filter(|(k, t)| is_ident(t) && (*k == 0 || body[k - 1] != ".")).map(|(_, t)| *t);
                functions.insert(name, names.collect());
                if compute {
                    entry_points.push(name);
                }
                (group, binding, compute) = (None, None, false);
                i = end;
            }
            "{" => {
                // a struct's body (at module scope)
                let (_, end) = block(&tokens, i);
                i = end;
            }
            _ => i += 1,
        }
    }
    entry_points
        .iter()
        .map(|ep| {
            let mut seen = BTreeSet::new();
            let mut slots = BTreeSet::new();
            let mut stack = vec![*ep];
            while let Some(f) = stack.pop() {
                if !seen.insert(f) {
                    continue;
                }
                for name in functions.get(f).map(Vec::as_slice).unwrap_or(&[]) {
                    if let Some(slot) = globals.get(name) {
                        slots.insert(*slot);
                    } else if functions.contains_key(name) {
                        stack.push(name);
                    }
                }
            }
            (ep.to_string(), slots)
        })
        .collect()
}

fn parse_u32(t: &str) -> Option<u32> {
    t.trim_end_matches('u').parse().ok()
}

fn is_ident(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// The source without `//` and `/* */` comments.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let b = src.as_bytes();
    let mut i = 0;
    let mut depth = 0;
    while i < b.len() {
        if depth == 0 && b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if depth > 0 && b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
        } else {
            if depth == 0 {
                out.push(b[i] as char);
            }
            i += 1;
        }
    }
    out
}

/// Identifiers and numbers as one token each, every other non-space character as a token of its own.
fn tokenize(src: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, c) in src.char_indices() {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (word, start) {
            (true, None) => start = Some(i),
            (true, Some(_)) => {}
            (false, s) => {
                if let Some(s) = s {
                    tokens.push(&src[s..i]);
                    start = None;
                }
                if !c.is_whitespace() {
                    tokens.push(&src[i..i + c.len_utf8()]);
                }
            }
        }
    }
    if let Some(s) = start {
        tokens.push(&src[s..]);
    }
    tokens
}

/// The tokens inside the braces that open at `open` (`tokens[open] == "{"`), and the index past the
/// closing brace.
fn block<'t, 's>(tokens: &'t [&'s str], open: usize) -> (&'t [&'s str], usize) {
    let mut depth = 0;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match *t {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return (&tokens[open.min(tokens.len())..j], j + 1);
                }
            }
            _ => {}
        }
    }
    (&tokens[open.min(tokens.len())..], tokens.len())
}

/// The index past the `;` that ends the declaration at `i`.
fn skip_item(tokens: &[&str], i: usize) -> usize {
    tokens.iter().skip(i).position(|t| *t == ";").map(|p| i + p + 1).unwrap_or(tokens.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_calls_and_ignores_comments_and_locals_of_other_names() {
        let src = "
            @group(0) @binding(0) var<storage, read> a: array<u32>;
            @group(0) @binding(1) var<storage, read_write> b: array<u32>; // b
            @group(1) @binding(3) var<storage, read> c: array<u32>;
            struct S { a: u32, }
            fn helper(i: u32) -> u32 { return a[i]; }
            /* fn ghost() { c[0]; } */
            @compute @workgroup_size(64)
            fn one(@builtin(global_invocation_id) g: vec3<u32>) { b[g.x] = helper(g.x); }
            @compute @workgroup_size(64)
            fn two() { let x = 1.5e3; let s = S(1u); c[s.a]; }
        ";
        let uses = entry_point_uses(src);
        assert_eq!(uses["one"], BTreeSet::from([(0, 0), (0, 1)]));
        assert_eq!(uses["two"], BTreeSet::from([(1, 3)]));
        assert_eq!(uses.len(), 2);
    }
}
