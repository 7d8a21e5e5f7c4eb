//! Which locals are traced. A macro sees tokens, not types, so it tells traced values from
//! static ones by where they come from: traced parameters, and everything computed from them
//! (except shape queries such as `x.shape()`), are traced; literals, integers and shapes are
//! static.

use std::collections::HashMap;

/// Whether a value is traced (an array inside the trace) or static (known while tracing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taint {
    Static,
    Traced,
}

impl Taint {
    pub fn is_traced(self) -> bool {
        self == Taint::Traced
    }

    /// The taint of a value computed from both.
    pub fn join(self, other: Taint) -> Taint {
        if self.is_traced() || other.is_traced() {
            Taint::Traced
        } else {
            Taint::Static
        }
    }
}

/// Nested scopes of local names and their taint.
#[derive(Clone, Default)]
pub struct Scopes {
    frames: Vec<HashMap<String, Taint>>,
}

impl Scopes {
    pub fn push(&mut self) {
        self.frames.push(HashMap::new());
    }

    pub fn pop(&mut self) {
        self.frames.pop();
    }

    /// Declares `name` in the innermost scope.
    pub fn declare(&mut self, name: &str, taint: Taint) {
        if self.frames.is_empty() {
            self.push();
        }
        self.frames.last_mut().expect("pushed above").insert(name.to_string(), taint);
    }

    /// The taint of a local, or `None` for names that are not locals (items, constants).
    pub fn get(&self, name: &str) -> Option<Taint> {
        self.frames.iter().rev().find_map(|f| f.get(name).copied())
    }

    /// Records an assignment: a local becomes traced once a traced value is stored in it.
    pub fn assign(&mut self, name: &str, taint: Taint) {
        if let Some(slot) = self.frames.iter_mut().rev().find_map(|f| f.get_mut(name)) {
            *slot = slot.join(taint);
        }
    }

    /// How many scopes are open (so a branch can tell its own locals from outer ones).
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// The depth of the scope that declares `name`.
    pub fn declared_at(&self, name: &str) -> Option<usize> {
        self.frames.iter().rposition(|f| f.contains_key(name)).map(|i| i + 1)
    }
}
