//! Fusion: partitioning a program into groups of elementwise work that run in one pass.
//!
//! A fused group is a DAG of elementwise equations that all produce the same shape (its
//! *iteration shape*), together with the broadcasts that feed it and, optionally, one
//! reduction at its end. Its values live only in cache-sized tiles (see
//! [`crate::exec::cpu::fused`]); only the values something outside the group reads are
//! written to memory.
//!
//! The pass walks the equations in order, keeping *open* groups that may still grow. An
//! elementwise equation joins (and merges) the open groups of its operands with its shape, or
//! else an open group with its shape that reads one of its operands too (a sibling), or
//! starts a new one; any other reader of a group's value closes that group, so a group never
//! grows past an equation that depends on it. A closed group runs where its last member
//! stood, after everything its members read.
//!
//! Axes of extent 1 do not change which element sits where, so a group's iteration shape is
//! its members' shape without them: `[256, 1, 256]` and `[256, 256]` values share a group,
//! and a reshape between them is another name for the same tile values.
//!
//! A transpose of a group's value that swaps two blocks of axes (a matrix transpose, after
//! merging neighbouring axes) ends the group: the group writes that value out in the
//! transposed order, tile by tile while the tile is in cache, rather than writing it in order
//! for a separate transpose to read back.

use std::collections::HashMap;
use std::sync::Arc;

use crate::dtype::DType;
use crate::exec::cpu::native::NativeCache;
use crate::ir::{Atom, Program, Var};
use crate::primitives::{Aval, Fusion, Primitive, ReduceOp, SliceOp};
use crate::shape::contiguous_strides;

/// Tiles of a fused group hold about this many elements (32 KiB of f32 per value, so a
/// tile's live values stay in L1/L2).
pub const TILE: usize = 8192;
/// A reduction whose rows (or kept columns) are longer than this ends its group instead of
/// joining it: its tiles would no longer fit in cache.
const MAX_REDUCED_ROW: usize = 1 << 16;

/// One step of a planned program: an equation on its own, or a fused group.
#[derive(Debug)]
pub enum Step {
    /// The equation at this index of the program.
    Single(usize),
    /// A fused group.
    Fused(Box<FusedGroup>),
    /// Two independent equations that run at the same time, each on its share of the threads
    /// (see [`crate::exec::schedule`]).
    Pair([usize; 2]),
}

/// A group of equations that runs tile by tile over its iteration shape.
#[derive(Debug)]
pub struct FusedGroup {
    /// The iteration shape every member produces (less its axes of extent 1).
    pub shape: Vec<usize>,
    /// The values read from outside, each once, with how a tile reads it.
    pub inputs: Vec<(Atom, Load)>,
    /// The elementwise equations, in program order.
    pub ops: Vec<TileOp>,
    /// The values written out.
    pub outputs: Vec<Output>,
    /// Variables that name an output's value again (through unit-axis reshapes): each is
    /// output `.1` under its own aval.
    pub aliases: Vec<(Var, usize, Aval)>,
    /// The reduction that ends the group, if any.
    pub reduction: Option<Reduction>,
    /// How many equations of the program the group stands for.
    pub equations: usize,
    /// The float dtype every value has, when every op has a slice form (and the reduction,
    /// if any, folds an op's value of that dtype): the group then runs as loops from its
    /// inputs straight into its outputs and its reduction's tiles.
    pub slice_dtype: Option<DType>,
    /// How many tile buffers the ops' values need at once (see [`TileOp::slot`]).
    pub arena_slots: usize,
    /// The group's loop compiled to machine code, made on first use where it suits.
    pub native: NativeCache,
}

/// A value a group writes out.
#[derive(Debug)]
pub struct Output {
    pub value: Value,
    /// The variable it defines.
    pub var: Var,
    pub aval: Aval,
    /// The order its elements are written in.
    pub layout: Layout,
}

/// The order of an output's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The iteration order.
    RowMajor,
    /// The iteration order seen as a `[rows, cols]` matrix, transposed: the output is
    /// `[cols, rows]`, its element `(c, r)` the value's element `r * cols + c`.
    Transposed { rows: usize, cols: usize },
}

/// A value inside a group's tile: one of its inputs, or the result of one of its ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Input(usize),
    Op(usize),
}

/// How a tile reads an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Load {
    /// The input has the iteration shape: a tile reads its own flat range.
    Full,
    /// The input has one element: every tile reads it as a scalar.
    Scalar,
    /// A broadcast input: the element stride of each iteration axis (0 on broadcast axes).
    Strided(Vec<usize>),
}

impl Load {
    /// The period with which a broadcast input's values repeat along the flat iteration order
    /// of `shape`: the length of its trailing run of contiguous axes, when it is broadcast
    /// along all the others (a bias added to every row repeats with the row's length). Its
    /// first `period` elements, in order, are then all it holds.
    pub fn period(&self, shape: &[usize]) -> Option<usize> {
        let Load::Strided(strides) = self else { return None };
        let mut len = 1;
        let mut axes = shape.iter().zip(strides).rev().peekable();
        while let Some((&extent, _)) = axes.next_if(|&(_, &stride)| stride == len) {
            len *= extent;
        }
        (len > 1 && axes.all(|(_, &stride)| stride == 0)).then_some(len)
    }

    /// For a broadcast input that holds one value per row of `shape` (broadcast along its
    /// trailing axes, with its leading axes in row-major order: the mean of each row, as
    /// `mean(x, axis=-1, keepdims=True)` gives it), the length of those rows. The value for
    /// the `i`-th row of the flat iteration order is then its element `i`.
    pub fn per_row(&self, shape: &[usize]) -> Option<usize> {
        let Load::Strided(strides) = self else { return None };
        let broadcast = strides.iter().rev().take_while(|&&stride| stride == 0).count();
        let (leading, trailing) = shape.split_at(shape.len() - broadcast);
        let mut rows = 1;
        for (&extent, &stride) in leading.iter().zip(strides).rev() {
            if extent != 1 && stride != rows {
                return None;
            }
            rows *= extent;
        }
        let row: usize = trailing.iter().product();
        (rows > 1 && row > 1).then_some(row)
    }
}

/// An elementwise equation of a group.
#[derive(Debug)]
pub struct TileOp {
    pub prim: Arc<dyn Primitive>,
    pub inputs: Vec<Value>,
    /// The op as a slice loop, if it has one.
    pub slice: Option<SliceOp>,
    pub dtype: DType,
    pub weak: bool,
    /// Values whose last reader in the tile is this op.
    pub release: Vec<Value>,
    /// The index in [`FusedGroup::outputs`] of this op's value, if it leaves the group (the
    /// first such output; fused groups write it as the op runs, and copy the value to the
    /// others).
    pub output: Option<usize>,
    /// Which of the tile's [`FusedGroup::arena_slots`] buffers holds this op's value (when it
    /// is not written straight into its output).
    pub slot: usize,
}

/// The reduction at the end of a group.
#[derive(Debug)]
pub struct Reduction {
    pub op: ReduceOp,
    pub input: Value,
    pub layout: ReduceLayout,
    pub out: Var,
    pub aval: Aval,
}

/// Which axes a fused reduction removes, seen as a matrix over the iteration shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceLayout {
    /// The trailing axes, `inner` elements per row: each tile reduces whole rows.
    Rows { inner: usize },
    /// The leading axes (all of them when `kept` is 1): each tile reduces its rows to a
    /// partial result of `kept` elements, and the partials are combined in tile order.
    Columns { kept: usize },
}

impl FusedGroup {
    /// The variables the group's results define, in the order it returns them: its outputs,
    /// then its reduction's result.
    pub fn result_vars(&self) -> impl Iterator<Item = Var> + '_ {
        self.outputs.iter().map(|o| o.var).chain(self.reduction.as_ref().map(|r| r.out))
    }

    /// Every variable the group defines: its results and their reshaped aliases.
    pub fn defined_vars(&self) -> impl Iterator<Item = Var> + '_ {
        self.result_vars().chain(self.aliases.iter().map(|(v, _, _)| *v))
    }

    /// The number of elements of the iteration shape.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the iteration shape has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements per row of the tile layout: tiles hold whole rows.
    pub fn row_len(&self) -> usize {
        match self.reduction.as_ref().map(|r| r.layout) {
            Some(ReduceLayout::Rows { inner }) => inner,
            Some(ReduceLayout::Columns { kept }) => kept,
            None => 1,
        }
    }

    /// Elements per tile of whole rows of the tile layout (about [`TILE`], at least one row),
    /// and how many such tiles cover the group. Every path that runs a group in row tiles cuts
    /// it this way, so their partial reductions are combined over the same tiles.
    pub fn row_tiles(&self) -> (usize, usize) {
        let tile = (TILE / self.row_len()).max(1) * self.row_len();
        (tile, self.len().div_ceil(tile))
    }
}

/// A group while the pass builds it.
struct Building {
    /// The iteration shape, without axes of extent 1.
    shape: Vec<usize>,
    /// Member equations (elementwise ops, absorbed broadcasts and reshapes), in program order.
    members: Vec<usize>,
    reduction: Option<usize>,
    /// Transposes of member values that end the group (see [`Partition::absorb_transpose`]).
    transposes: Vec<usize>,
    state: State,
}

/// Whether a group may still take equations.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    /// Ended by a transpose, and read by nothing else since: further transposes may join.
    Transposing,
    Closed,
}

/// Partitions `program` into steps. With `fuse` false every equation is its own step.
pub fn partition(program: &Program, fuse: bool) -> Vec<Step> {
    if !fuse {
        return (0..program.equations.len()).map(Step::Single).collect();
    }
    let mut pass = Partition::new(program);
    for i in 0..program.equations.len() {
        pass.place(i);
    }
    emit(program, pass.groups, &pass.alias)
}

/// The partition pass over one program: the groups so far and which defines each variable.
struct Partition<'p> {
    program: &'p Program,
    groups: Vec<Building>,
    /// For each group, the group it was merged into (itself while it is not merged).
    alias: Vec<usize>,
    /// The group that defines each variable (indices into `groups`, which never move).
    defined_in: HashMap<Var, usize>,
}

impl<'p> Partition<'p> {
    fn new(program: &'p Program) -> Partition<'p> {
        Partition { program, groups: Vec::new(), alias: Vec::new(), defined_in: HashMap::new() }
    }

    /// Adds equation `i` to a group if it can join one, or closes the groups it reads from.
    fn place(&mut self, i: usize) {
        let program = self.program;
        let eqn = &program.equations[i];
        let out_aval = eqn.outputs.first().map(|v| program.aval(*v));
        let joined = match (eqn.prim.fusion(), out_aval) {
            (Fusion::Elementwise | Fusion::Broadcast { .. }, Some(aval))
                if eqn.outputs.len() == 1 && aval.shape.iter().product::<usize>() > 0 =>
            {
                self.join(i, &aval.shape)
            }
            (Fusion::Reduce { axes, .. }, Some(_)) => self.end_with_reduction(i, axes),
            (Fusion::Reshape, Some(aval)) => self.rename(i, &aval.shape),
            (Fusion::Transpose { permutation }, Some(_)) => self.absorb_transpose(i, permutation),
            _ => None,
        };
        match joined {
            Some(g) => {
                for v in &eqn.outputs {
                    self.defined_in.insert(*v, g);
                }
            }
            // Every group this equation reads from is closed: it must run before this one.
            None => {
                for atom in &eqn.inputs {
                    if let Atom::Var(v) = atom {
                        if let Some(&g) = self.defined_in.get(v) {
                            let g = self.root(g);
                            self.groups[g].state = State::Closed;
                        }
                    }
                }
            }
        }
    }

    /// The group that group `g` was merged into, or `g`.
    fn root(&self, mut g: usize) -> usize {
        while self.alias[g] != g {
            g = self.alias[g];
        }
        g
    }

    /// The variable equation `i` reads first, and the group that defines it, if any.
    fn operand_group(&self, i: usize) -> Option<(Var, usize)> {
        let Atom::Var(v) = self.program.equations[i].inputs[0] else { return None };
        Some((v, self.root(*self.defined_in.get(&v)?)))
    }

    /// Adds reshape `i` (to `shape`) to its operand's group when the group is open and the
    /// reshape only adds or removes axes of extent 1: its value is then its operand's.
    fn rename(&mut self, i: usize, shape: &[usize]) -> Option<usize> {
        let (_, g) = self.operand_group(i)?;
        let group = &mut self.groups[g];
        if group.state != State::Open || group.shape != squeezed(shape) {
            return None;
        }
        group.members.push(i);
        Some(g)
    }

    /// Adds elementwise (or broadcast) equation `i` of output `shape` to a group: the merge of
    /// the open groups of its operands with that shape, or a new one.
    fn join(&mut self, i: usize, shape: &[usize]) -> Option<usize> {
        let eqn = &self.program.equations[i];
        let is_broadcast = matches!(eqn.prim.fusion(), Fusion::Broadcast { .. });
        let shape = squeezed(shape);
        let mut targets: Vec<usize> = Vec::new();
        for atom in &eqn.inputs {
            let Atom::Var(v) = atom else { continue };
            let Some(&g) = self.defined_in.get(v) else { continue };
            let g = self.root(g);
            let group = &mut self.groups[g];
            // A broadcast reads its operand through strides: the operand must come from memory.
            if !is_broadcast && group.state == State::Open && group.shape == shape {
                if !targets.contains(&g) {
                    targets.push(g);
                }
            } else {
                group.state = State::Closed;
            }
        }
        let Some(&target) = targets.first() else {
            // (A broadcast starts a group of its own: if nothing in its group reads it, it runs
            // on its own, a copy no loop would do faster.)
            if let Some(sibling) = self.open_sibling(i, &shape).filter(|_| !is_broadcast) {
                self.groups[sibling].members.push(i);
                return Some(sibling);
            }
            let transposes = Vec::new();
            let (reduction, state) = (None, State::Open);
            self.groups.push(Building { shape, members: vec![i], reduction, transposes, state });
            self.alias.push(self.groups.len() - 1);
            return Some(self.groups.len() - 1);
        };
        for &other in &targets[1..] {
            let members = std::mem::take(&mut self.groups[other].members);
            self.groups[target].members.extend(members);
            self.groups[other].state = State::Closed;
            self.alias[other] = target;
        }
        let members = &mut self.groups[target].members;
        members.sort_unstable();
        members.push(i);
        Some(target)
    }

    /// The latest open group of iteration shape `shape` with a member that reads one of the
    /// variables equation `i` reads, if any. Joining it, `i` reads that input in the same pass:
    /// `exp(x)` and `tanh(x)` over 5000 x 5000 took 16.0-16.5 ms as one group against 21.3-22.4
    /// as two. That is always valid: no equation outside an open group has read its values yet,
    /// so it may run at `i`, after all its members' operands. Only an op with a slice form
    /// joins, into a group whose ops all give its dtype: a group of mixed dtypes, or with an
    /// op that has none, runs on the slower generic path and never compiles.
    fn open_sibling(&self, i: usize, shape: &[usize]) -> Option<usize> {
        let program = self.program;
        let eqn = &program.equations[i];
        let dtype = program.aval(eqn.outputs[0]).dtype;
        let alike = |m: usize| {
            let member = &program.equations[m];
            member.prim.fusion() != Fusion::Elementwise
                || (member.prim.slice_op().is_some()
                    && program.aval(member.outputs[0]).dtype == dtype)
        };
        eqn.prim.slice_op()?;
        let vars: Vec<Var> = eqn
            .inputs
            .iter()
            .filter_map(|a| match a {
                Atom::Var(v) => Some(*v),
                _ => None,
            })
            .collect();
        let reads = |m: usize| {
            let inputs = &program.equations[m].inputs;
            inputs.iter().any(|a| matches!(a, Atom::Var(v) if vars.contains(v)))
        };
        (0..self.groups.len()).rev().find(|&g| {
            let group = &self.groups[g];
            self.alias[g] == g
                && group.state == State::Open
                && group.shape == shape
                && group.members.iter().any(|&m| reads(m))
                && group.members.iter().all(|&m| alike(m))
        })
    }

    /// Ends the open group of transpose `i`'s operand with the transpose, when it swaps two
    /// blocks of the operand's axes (see [`transposed_layout`]). Only further transposes may
    /// join the group then: its tiles hold values in the iteration order, not the transposed
    /// one.
    fn absorb_transpose(&mut self, i: usize, permutation: &[usize]) -> Option<usize> {
        let (v, g) = self.operand_group(i)?;
        transposed_layout(&self.program.aval(v).shape, permutation)?;
        let group = &mut self.groups[g];
        if group.state == State::Closed {
            return None;
        }
        group.transposes.push(i);
        group.state = State::Transposing;
        Some(g)
    }

    /// Ends the open group of a reduction's operand with the reduction, when its axes are a
    /// leading or trailing run of the operand's axes and the rows fit in a tile.
    fn end_with_reduction(&mut self, i: usize, axes: &[usize]) -> Option<usize> {
        let (v, g) = self.operand_group(i)?;
        let operand = self.program.aval(v);
        let halves = matches!(operand.dtype, DType::F16 | DType::BF16);
        let group = &mut self.groups[g];
        if group.state != State::Open || halves {
            return None;
        }
        reduce_layout(&group.shape, &squeezed_axes(&operand.shape, axes))?;
        group.reduction = Some(i);
        group.state = State::Closed;
        Some(g)
    }
}

/// `shape` without its axes of extent 1: the iteration shape of a group holding it.
fn squeezed(shape: &[usize]) -> Vec<usize> {
    shape.iter().copied().filter(|&d| d != 1).collect()
}

/// The layout in which a group whose value has `shape` writes its transpose by `permutation`:
/// when, with axes of extent 1 dropped and neighbours that stay neighbours merged, the
/// transpose is `[rows, cols] -> [cols, rows]`.
fn transposed_layout(shape: &[usize], permutation: &[usize]) -> Option<Layout> {
    let out_shape: Vec<usize> = permutation.iter().map(|&p| shape[p]).collect();
    let out_strides = contiguous_strides(&out_shape);
    // Each operand axis's element stride in the output, outermost first, unit axes dropped.
    let mut strides = vec![0; shape.len()];
    for (i, &p) in permutation.iter().enumerate() {
        strides[p] = out_strides[i];
    }
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (&extent, &stride) in shape.iter().zip(&strides).filter(|(&d, _)| d != 1) {
        match merged.last_mut() {
            Some((d, s)) if *s == stride * extent => (*d, *s) = (*d * extent, stride),
            _ => merged.push((extent, stride)),
        }
    }
    match merged[..] {
        [(rows, 1), (cols, s)] if s == rows => Some(Layout::Transposed { rows, cols }),
        _ => None,
    }
}

/// The axes of `shape` that `axes` name once its axes of extent 1 are gone (reducing those
/// changes nothing).
fn squeezed_axes(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    let index = |a: usize| shape[..a].iter().filter(|&&d| d != 1).count();
    axes.iter().filter(|&&a| shape[a] != 1).map(|&a| index(a)).collect()
}

/// The tile layout of reducing `axes` of `shape`, if fusion handles it.
fn reduce_layout(shape: &[usize], axes: &[usize]) -> Option<ReduceLayout> {
    if axes.is_empty() {
        return None;
    }
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    let rank = shape.len();
    let leading = sorted.iter().enumerate().all(|(k, &a)| a == k);
    let trailing = sorted.iter().enumerate().all(|(k, &a)| a == rank - sorted.len() + k);
    let kept: usize =
        shape.iter().enumerate().filter(|(a, _)| !sorted.contains(a)).map(|(_, &d)| d).product();
    let reduced: usize = sorted.iter().map(|&a| shape[a]).product();
    if leading || kept == 1 {
        (kept <= MAX_REDUCED_ROW).then_some(ReduceLayout::Columns { kept })
    } else if trailing {
        (reduced <= MAX_REDUCED_ROW).then_some(ReduceLayout::Rows { inner: reduced })
    } else {
        None
    }
}

/// Whether the one elementwise op of `group` runs as a group of one rather than on its own:
/// when it writes a float array large enough for a group to stream
/// ([`STREAM_MIN_BYTES`](crate::exec::cpu::fused_float::STREAM_MIN_BYTES)), whose group loop (compiled where the CPU allows)
/// streams the output and reads a broadcast operand in place. A softmax's division of each
/// row by its sum (5000 x 5000 `f32`) took 6.6 ms as an op on its own, 4.5 as a group.
fn runs_better_as_a_group(program: &Program, group: &Building) -> bool {
    let eqn = &program.equations[group.members[0]];
    let aval = program.aval(eqn.outputs[0]);
    let bytes = match aval.dtype {
        DType::F32 => 4,
        DType::F64 => 8,
        _ => return false,
    };
    aval.shape.iter().product::<usize>() * bytes >= crate::exec::cpu::fused_float::STREAM_MIN_BYTES
}

/// Turns the groups into steps in a valid order: each group where its last equation stood.
fn emit(program: &Program, groups: Vec<Building>, alias: &[usize]) -> Vec<Step> {
    let n = program.equations.len();
    let mut owner: Vec<Option<usize>> = vec![None; n];
    for (g, group) in groups.iter().enumerate() {
        if alias[g] != g {
            continue;
        }
        let covered =
            group.members.len() + usize::from(group.reduction.is_some()) + group.transposes.len();
        let has_op = group
            .members
            .iter()
            .any(|&m| program.equations[m].prim.fusion() == Fusion::Elementwise);
        let alone = covered == 1 && has_op && runs_better_as_a_group(program, group);
        if (covered >= 2 || alone) && (has_op || group.reduction.is_some()) {
            for &m in group.members.iter().chain(&group.reduction).chain(&group.transposes) {
                owner[m] = Some(g);
            }
        }
    }
    let mut last: HashMap<usize, usize> = HashMap::new();
    for (i, g) in owner.iter().enumerate() {
        if let Some(g) = g {
            last.insert(*g, i);
        }
    }
    let used_outside = readers_outside(program, &owner);
    let mut steps = Vec::new();
    for (i, owner) in owner.iter().enumerate() {
        match *owner {
            None => steps.push(Step::Single(i)),
            Some(g) if last[&g] == i => {
                let group = build(program, &groups[g], &used_outside);
                steps.push(Step::Fused(Box::new(group)));
            }
            Some(_) => {}
        }
    }
    steps
}

/// The variables read by an equation outside their defining group, or by the program's
/// outputs.
fn readers_outside(program: &Program, owner: &[Option<usize>]) -> Vec<bool> {
    let mut group_of: HashMap<Var, usize> = HashMap::new();
    for (i, eqn) in program.equations.iter().enumerate() {
        if let Some(g) = owner[i] {
            for v in &eqn.outputs {
                group_of.insert(*v, g);
            }
        }
    }
    let mut outside = vec![false; program.avals.len()];
    for (i, eqn) in program.equations.iter().enumerate() {
        for atom in &eqn.inputs {
            if let Atom::Var(v) = atom {
                if group_of.get(v).is_some_and(|&g| owner[i] != Some(g)) {
                    outside[v.index()] = true;
                }
            }
        }
    }
    for atom in &program.outputs {
        if let Atom::Var(v) = atom {
            outside[v.index()] = true;
        }
    }
    outside
}

/// Compiles a group's members into tile operations.
fn build(program: &Program, group: &Building, used_outside: &[bool]) -> FusedGroup {
    let shape = group.shape.clone();
    let mut inputs: Vec<(Atom, Load)> = Vec::new();
    let mut values: HashMap<Var, Value> = HashMap::new();
    let mut ops: Vec<TileOp> = Vec::new();
    let input = |atom: &Atom, load: Load, inputs: &mut Vec<(Atom, Load)>| -> Value {
        let same = |(a, l): &(Atom, Load)| l == &load && same_atom(a, atom);
        let k = inputs.iter().position(same).unwrap_or_else(|| {
            inputs.push((atom.clone(), load));
            inputs.len() - 1
        });
        Value::Input(k)
    };
    for &m in &group.members {
        let eqn = &program.equations[m];
        let out = eqn.outputs[0];
        let out_shape = &program.aval(out).shape;
        match eqn.prim.fusion() {
            Fusion::Broadcast { broadcast_dimensions } => {
                let operand = program.atom_aval(&eqn.inputs[0]);
                let strides = strides_into(&operand.shape, broadcast_dimensions, out_shape);
                let load = strided_load(&strides, out_shape, false);
                let v = input(&eqn.inputs[0], load, &mut inputs);
                values.insert(out, v);
                continue;
            }
            Fusion::Reshape => {
                let Atom::Var(v) = &eqn.inputs[0] else { unreachable!("a group's own value") };
                values.insert(out, values[v]);
                continue;
            }
            _ => {}
        }
        let operands = eqn
            .inputs
            .iter()
            .map(|atom| match atom {
                Atom::Var(v) if values.contains_key(v) => values[v],
                _ => {
                    let aval = program.atom_aval(atom);
                    input(atom, numpy_load(&aval.shape, out_shape), &mut inputs)
                }
            })
            .collect();
        let aval = program.aval(out);
        ops.push(TileOp {
            prim: eqn.prim.clone(),
            inputs: operands,
            slice: eqn.prim.slice_op(),
            dtype: aval.dtype,
            weak: aval.weak,
            release: Vec::new(),
            output: None,
            slot: 0,
        });
        values.insert(out, Value::Op(ops.len() - 1));
    }
    let reduction = group.reduction.map(|r| {
        let eqn = &program.equations[r];
        let Fusion::Reduce { op, axes } = eqn.prim.fusion() else { unreachable!("a reduction") };
        let Atom::Var(v) = &eqn.inputs[0] else {
            unreachable!("reductions of groups read variables")
        };
        let axes = squeezed_axes(&program.aval(*v).shape, axes);
        Reduction {
            op,
            input: values[v],
            layout: reduce_layout(&shape, &axes).expect("checked when the group was built"),
            out: eqn.outputs[0],
            aval: program.aval(eqn.outputs[0]).clone(),
        }
    });
    let mut outputs: Vec<Output> = Vec::new();
    let mut aliases = Vec::new();
    for &m in &group.members {
        let var = program.equations[m].outputs[0];
        if used_outside[var.index()] {
            let aval = program.aval(var).clone();
            match outputs.iter().position(|o| o.value == values[&var]) {
                Some(o) => aliases.push((var, o, aval)),
                None => {
                    let (value, layout) = (values[&var], Layout::RowMajor);
                    outputs.push(Output { value, var, aval, layout })
                }
            }
        }
    }
    for &t in &group.transposes {
        let eqn = &program.equations[t];
        let (Atom::Var(operand), Fusion::Transpose { permutation }) =
            (&eqn.inputs[0], eqn.prim.fusion())
        else {
            unreachable!("absorbed transposes read a group value")
        };
        let layout = transposed_layout(&program.aval(*operand).shape, permutation)
            .expect("checked when the transpose was absorbed");
        let var = eqn.outputs[0];
        let aval = program.aval(var).clone();
        outputs.push(Output { value: values[operand], var, aval, layout });
    }
    // In-order outputs come first, so an op whose value leaves in order writes that one.
    for (o, output) in outputs.iter().enumerate() {
        if let Value::Op(i) = output.value {
            ops[i].output.get_or_insert(o);
        }
    }
    release_dead_values(&mut ops, &outputs, reduction.as_ref());
    let arena_slots = assign_slots(&mut ops);
    let equations = group.members.len() + usize::from(reduction.is_some()) + group.transposes.len();
    let slice_dtype = slice_dtype(program, &inputs, &ops, reduction.as_ref());
    FusedGroup {
        shape,
        inputs,
        ops,
        outputs,
        aliases,
        reduction,
        equations,
        slice_dtype,
        arena_slots,
        native: NativeCache::default(),
    }
}

/// The dtype of a group that can run as slice loops: f32 or f64 throughout, every op with a
/// slice form, and a reduction, if any, of an op's value (not of an input) to that dtype.
fn slice_dtype(
    program: &Program,
    inputs: &[(Atom, Load)],
    ops: &[TileOp],
    reduction: Option<&Reduction>,
) -> Option<DType> {
    let dtype = ops.first()?.dtype;
    let uniform = ops.iter().all(|op| op.dtype == dtype && op.slice.is_some())
        && inputs.iter().all(|(a, _)| program.atom_aval(a).dtype == dtype);
    let reduces_op =
        reduction.is_none_or(|r| matches!(r.input, Value::Op(_)) && r.aval.dtype == dtype);
    (matches!(dtype, DType::F32 | DType::F64) && uniform && reduces_op).then_some(dtype)
}

fn same_atom(a: &Atom, b: &Atom) -> bool {
    match (a, b) {
        (Atom::Var(x), Atom::Var(y)) => x == y,
        (Atom::Const(x), Atom::Const(y)) => x.buffer_id() == y.buffer_id(),
        _ => false,
    }
}

/// How an operand broadcast by NumPy's rules (right-aligned) to an equation's output `shape`
/// is read.
fn numpy_load(operand: &[usize], shape: &[usize]) -> Load {
    let offset = shape.len() - operand.len();
    let dims: Vec<usize> = (offset..shape.len()).collect();
    strided_load(&strides_into(operand, &dims, shape), shape, true)
}

/// How an operand read with `strides` along the axes of an equation's output `shape` is read
/// over the group's iteration shape (`shape` without its unit axes). A one-element operand is
/// a scalar when `scalar` allows; a `broadcast_in_dim`'s value has the full tile shape even
/// then (a unary op reading it needs every element).
fn strided_load(strides: &[usize], shape: &[usize], scalar: bool) -> Load {
    let strides: Vec<usize> =
        shape.iter().zip(strides).filter(|(&d, _)| d != 1).map(|(_, &s)| s).collect();
    if strides == contiguous_strides(&squeezed(shape)) {
        Load::Full
    } else if scalar && strides.iter().all(|&s| s == 0) {
        Load::Scalar
    } else {
        Load::Strided(strides)
    }
}

/// The operand's element stride along each axis of `shape` (0 where it is broadcast).
fn strides_into(operand: &[usize], dims: &[usize], shape: &[usize]) -> Vec<usize> {
    let mut own = vec![0usize; operand.len()];
    let mut step = 1;
    for a in (0..operand.len()).rev() {
        own[a] = if operand[a] == 1 { 0 } else { step };
        step *= operand[a];
    }
    let mut strides = vec![0usize; shape.len()];
    for (a, &d) in dims.iter().enumerate() {
        strides[d] = own[a];
    }
    strides
}

/// Marks, for each op, the tile values no later op, output or reduction reads.
fn release_dead_values(ops: &mut [TileOp], outputs: &[Output], r: Option<&Reduction>) {
    let keep: Vec<Value> = outputs.iter().map(|o| o.value).chain(r.map(|r| r.input)).collect();
    let mut last: HashMap<Value, usize> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        for &v in &op.inputs {
            last.insert(v, i);
        }
    }
    for (v, i) in last {
        if !keep.contains(&v) {
            ops[i].release.push(v);
        }
    }
}

/// Gives each op a tile buffer, taking again one whose value has had its last reader, so a
/// long chain of ops cycles through a few cache-resident buffers instead of touching one per
/// op. Returns how many buffers a tile needs.
fn assign_slots(ops: &mut [TileOp]) -> usize {
    let mut free: Vec<usize> = Vec::new();
    let mut count = 0;
    for i in 0..ops.len() {
        // Taken before this op's own dead operands are freed: an op never writes over what
        // it reads.
        ops[i].slot = free.pop().unwrap_or_else(|| {
            count += 1;
            count - 1
        });
        let freed: Vec<usize> = ops[i]
            .release
            .iter()
            .filter_map(|v| match *v {
                Value::Op(j) => Some(ops[j].slot),
                Value::Input(_) => None,
            })
            .collect();
        free.extend(freed);
    }
    count
}
