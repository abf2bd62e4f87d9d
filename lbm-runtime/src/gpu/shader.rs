//! Composition of complete compute shaders per (model × layout × precision) from the model's
//! generated WGSL (`Model::WGSL`: `lbm_moments`, `lbm_equilibrium`, `lbm_collide`), the
//! layout's index function ([`AffineLayout::wgsl`]) and the lattice's geometry.
//!
//! One shader module holds every kernel of a streaming scheme, as entry points ([`Entry`]).
//! The two-copy (A-B) pipeline of Calore et al. 2019 §4:
//!
//! ```text
//! halo:      A_i(col ≥ LX + H) ← A_i(periodic image)        (x periodic only)
//! propagate: B_i(x) = A_i(x − c_i)                           (pull, Calore et al. 2019, eq. 3)
//! bc:        B_i(x) = A_ī(x) + 2 w_i ρ_w (c_i·u_w)/cs² on bounced links, then the site rules
//! collide:   B(x) = Ω(B(x))                                  (model + body force, in place)
//! fused:     B(x) = Ω(bc(A_i(x − c_i)))                      (one read, one write per population)
//! moments:   m(x) = lbm_moments(bc(A_i(x − c_i)))            (for reads of fields)
//! ```
//!
//! The in-place (AA) scheme (Bailey et al. 2009; the CPU's module `kernels` documents the
//! pattern) binds one copy `F` and alternates two half-steps, each a whole time step:
//!
//! ```text
//! hold_even:   held ← f*_i(x) of the curved links that read it         (before aa_pull)
//! aa_pull:     g = bc(F_i(x − c_i)); h = Ω(g); F_ī(x + c_i) = h_i   (F_i(x) on bounced ī)
//! fold:        halo columns pushed by aa_pull → their periodic image  (x periodic only)
//! hold_odd:    held ← f*_i(x), where the odd state keeps it            (before aa_local)
//! aa_local:    g_i = F_ī(x) (+ curved link, wall correction); h = Ω(rules(g)); F_i(x) = h_i
//! moments_odd: m(x) = lbm_moments(g) with g as aa_local gathers it
//! ```
//!
//! A site reads and writes the same elements in each half-step, so one thread per site
//! needs no synchronisation; the arithmetic is the CPU's, so both agree to round-off. A curved
//! wall's link also reads its site's own leaving population `f*_i(x)`, in a slot another
//! site's thread writes: it is held before the half-step (`hold_*`, from the entries of
//! `gpu::bc::pack`), into the `mout` binding past the moments (`HELD`).
//!
//! Everything the shader needs about the lattice is a constant (sizes, strides, weights,
//! velocities); real constants are written as `real(<shortest round-trip decimal of the f64>)`,
//! so an f64 shader carries them at full double precision (the literal is an abstract float,
//! converted once to `real`). The populations of one copy may be split across several storage
//! bindings of `CHUNK` values each (`max_storage_buffer_binding_size`); the accessors
//! `src_ld/src_st/dst_ld/dst_st` route a global index to its binding.

use super::bc::{BcShape, Field, HOLD, NONE};
use super::layout::AffineLayout;
use super::GpuError;
use crate::boundary::program::Kind;
use crate::boundary::{Term, OWN_SLOTS, TERMS, TERMS_LEN};
use crate::layout::Dims;
use crate::{Model, Real, Scheme};

use super::workgroup::{FIXED, SIZES};

/// The entry points of a composed shader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entry {
    /// Fills the halo columns from the periodic image.
    Halo,
    /// Pull streaming A → B.
    Propagate,
    /// Boundary links and rules on B.
    Bc,
    /// Collision on B, in place.
    Collide,
    /// Pull + bc + collide, A → B.
    Fused,
    /// Pre-collision moments of A (of the even AA state) for a range of columns.
    Moments,
    /// AA even → odd half-step on F.
    AaPull,
    /// Moves what [`Entry::AaPull`] pushed into the halo columns to their periodic image.
    Fold,
    /// AA odd → even half-step on F.
    AaLocal,
    /// Pre-collision moments of the odd AA state for a range of columns.
    MomentsOdd,
    /// A slab's fold after [`Entry::AaPull`]: what the neighbours pushed across the cuts,
    /// written by the host into the opposite halo columns, moved into the border columns.
    FoldIn,
    /// Pre-collision populations of a range of boundary records (of the two-copy state or the
    /// even AA one): what the walls send back, which momentum exchange reads.
    PreCollision,
    /// Pre-collision populations of a range of boundary records of the odd AA state.
    PreCollisionOdd,
    /// Holds the populations that interpolated links read beyond their sites' own slots,
    /// from the even AA state.
    HoldEven,
    /// Holds them from the odd AA state.
    HoldOdd,
    /// Holds again those of the even state in halo columns (a slab's, once its halos came).
    HoldHaloEven,
    /// The same in the odd state.
    HoldHaloOdd,
}

impl Entry {
    /// All entry points, in declaration order (`Entry::ALL[e as usize] == e`).
    pub const ALL: [Entry; 17] = [
        Entry::Halo,
        Entry::Propagate,
        Entry::Bc,
        Entry::Collide,
        Entry::Fused,
        Entry::Moments,
        Entry::AaPull,
        Entry::Fold,
        Entry::AaLocal,
        Entry::MomentsOdd,
        Entry::FoldIn,
        Entry::PreCollision,
        Entry::PreCollisionOdd,
        Entry::HoldEven,
        Entry::HoldOdd,
        Entry::HoldHaloEven,
        Entry::HoldHaloOdd,
    ];

    /// The entry points of the shader of `scheme`.
    pub fn of(scheme: Scheme) -> &'static [Entry] {
        match scheme {
            Scheme::TwoCopy => &[
                Entry::Halo,
                Entry::Propagate,
                Entry::Bc,
                Entry::Collide,
                Entry::Fused,
                Entry::Moments,
                Entry::PreCollision,
            ],
            Scheme::InPlace => &[
                Entry::Halo,
                Entry::Moments,
                Entry::AaPull,
                Entry::Fold,
                Entry::AaLocal,
                Entry::MomentsOdd,
                Entry::PreCollision,
                Entry::PreCollisionOdd,
                Entry::HoldEven,
                Entry::HoldOdd,
                Entry::HoldHaloEven,
                Entry::HoldHaloOdd,
            ],
        }
    }

    /// The WGSL function name.
    pub fn name(self) -> &'static str {
        match self {
            Entry::Halo => "halo",
            Entry::Propagate => "propagate",
            Entry::Bc => "bc",
            Entry::Collide => "collide",
            Entry::Fused => "fused",
            Entry::Moments => "moments",
            Entry::AaPull => "aa_pull",
            Entry::Fold => "fold",
            Entry::AaLocal => "aa_local",
            Entry::MomentsOdd => "moments_odd",
            Entry::FoldIn => "fold_in",
            Entry::PreCollision => "pre_collision",
            Entry::PreCollisionOdd => "pre_collision_odd",
            Entry::HoldEven => "hold_even",
            Entry::HoldOdd => "hold_odd",
            Entry::HoldHaloEven => "hold_halo_even",
            Entry::HoldHaloOdd => "hold_halo_odd",
        }
    }

    /// Whether the entry updates sites (and has [`Window`] variants).
    pub fn is_site_kernel(self) -> bool {
        matches!(self, Entry::Fused | Entry::AaPull | Entry::AaLocal)
    }
}

/// The sites a site kernel (`fused`, `aa_pull`, `aa_local`) updates: all of them, or — for a
/// slab whose halo columns the host fills — the bulk columns `[H, LX − H)`, which read no
/// halo column, and the border columns `[0, H) ∪ [LX − H, LX)`, which do. A slab's step is
/// its bulk, submitted while the halos travel, then its border (Calore et al. 2019 §6: the exchange
/// overlapped with the bulk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Window {
    /// Every site.
    All,
    /// Columns `[H, LX − H)`.
    Bulk,
    /// Columns `[0, H)` and `[LX − H, LX)`.
    Border,
}

impl Window {
    /// The suffix of the entry point's name.
    pub fn suffix(self) -> &'static str {
        match self {
            Window::All => "",
            Window::Bulk => "_bulk",
            Window::Border => "_border",
        }
    }
}

/// What a shader is composed for: the lattice's shape, the split of its populations across
/// bindings, the dispatch grid and the boundary code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShaderSpec {
    /// The lattice's shape.
    pub dims: Dims,
    /// Number of model parameters `P` (at least 1).
    pub params: usize,
    /// Values per population binding.
    pub chunk: u64,
    /// Bindings per copy of the populations.
    pub chunks: usize,
    /// Threads per row of the 2-D dispatch grid, a multiple of every workgroup size the
    /// lattice may run ([`super::workgroup::Grid`]).
    pub row: u32,
    /// Boundary code to include.
    pub bc: BcShape,
    /// The streaming scheme: which entry points, and one copy of the populations or two.
    pub scheme: Scheme,
    /// Where the per-site values of the model's fields ([`Model::FIELDS`]) start in
    /// `consts`: field `j` of site `s = x·PLANE + z·LY + y` at `fields + j·NSITES + s` (`None`:
    /// a model without fields).
    pub fields: Option<usize>,
    /// A slab whose halo columns the host fills: its site kernels also have
    /// [`Window::Bulk`] and [`Window::Border`] entry points (when `LX ≥ 2H`), and in place it
    /// has [`Entry::FoldIn`].
    pub slab: bool,
    /// A compact precision on an adapter without `SHADER_F16`: its binary16 elements packed two
    /// per `u32` word (element `g` in half `g mod 2` of word `g / 2`, the host's byte order),
    /// read with `unpack2x16float` and written with `pack2x16float` and two atomic operations
    /// on the element's half of its word, since the element beside it may belong to another
    /// thread's site (in place, any site's). Ignored for f32 and f64.
    pub packed_f16: bool,
    /// Where the held populations (`gpu::bc::BcTables::held`) start in `mout`, past
    /// what the moments and pre-collision passes write there.
    pub held_at: usize,
}

impl ShaderSpec {
    /// Copies of the populations bound: two (A, B) for the two-copy scheme, one in place.
    pub fn copies(&self) -> usize {
        match self.scheme {
            Scheme::TwoCopy => 2,
            Scheme::InPlace => 1,
        }
    }

    /// Binding numbers: `0..chunks` copy A, `chunks..2·chunks` copy B (two-copy scheme), then
    /// consts, tables, the moments output and the control uniform.
    pub fn binding_consts(&self) -> u32 {
        (self.copies() * self.chunks) as u32
    }

    /// Every entry point of the shader, with its window: the scheme's entries, the bulk and
    /// border windows of its site kernels and, in place, [`Entry::FoldIn`] (a slab's).
    pub fn entry_points(&self) -> Vec<(Entry, Window)> {
        let mut all: Vec<(Entry, Window)> = Entry::of(self.scheme)
            .iter()
            .flat_map(|&e| {
                let ws = if e.is_site_kernel() {
                    self.windows()
                } else {
                    &[Window::All]
                };
                ws.iter().map(move |&w| (e, w))
            })
            .collect();
        if self.slab && self.scheme == Scheme::InPlace {
            all.push((Entry::FoldIn, Window::All));
        }
        all
    }

    /// Whether the site kernels have bulk and border windows.
    pub fn has_windows(&self) -> bool {
        self.slab && self.dims.lx >= 2 * self.dims.halo
    }

    /// The windows each site kernel has entry points for.
    pub fn windows(&self) -> &'static [Window] {
        if self.has_windows() {
            &[Window::All, Window::Bulk, Window::Border]
        } else {
            &[Window::All]
        }
    }
}

/// A real literal at full `f64` precision.
pub(super) fn lit(v: f64) -> String {
    format!("real({v:?})")
}

/// The WGSL type of the arithmetic of precision `T` (f16s computes in f32).
pub fn arithmetic<T: Real>() -> &'static str {
    if std::mem::size_of::<T>() == 8 {
        "f64"
    } else {
        "f32"
    }
}

/// Composes the shader of model `M` and precision `T` for `spec`, its populations addressed
/// as `lay` says.
///
/// `real` is the arithmetic's type and `store` the populations' stored one: `real` itself,
/// or for a compact precision ([`Real::COMPACT`], f16s) `f16` holding `f_i − w_i` (the CPU's
/// `storage::Pops`), or its bits in a `u32` where packed ([`ShaderSpec::packed_f16`]);
/// the value accessors add and subtract the slot's `w_i`.
pub fn compose<M: Model, T: Real>(spec: &ShaderSpec, lay: &AffineLayout) -> String {
    let mut s = types::<T>(spec);
    s += M::WGSL;
    s += &constants(spec, lay.vl as usize);
    s += &rest::<M>();
    s += &bindings::<T>(spec);
    s += &accessors::<T>(spec);
    s += &lay.wgsl();
    s += &helpers(spec);
    s += &site_params::<M>(spec);
    s += &pull::<M>();
    if spec.bc.sites > 0 {
        s += &boundary::<M>(spec);
    }
    s += &gather::<M>(spec);
    s += &entries::<M>(spec);
    if spec.scheme == Scheme::InPlace {
        s += &in_place::<M>(spec);
    }
    s
}

/// The aliases `real` (the arithmetic's type) and `store` (the populations' stored one, see
/// [`compose`]).
fn types<T: Real>(spec: &ShaderSpec) -> String {
    let store = if !T::COMPACT {
        "real"
    } else if spec.packed_f16 {
        "u32"
    } else {
        "f16"
    };
    let enable = if T::COMPACT && !spec.packed_f16 {
        "enable f16;\n"
    } else {
        ""
    };
    format!(
        "{enable}alias real = {};\nalias store = {store};\n\n",
        arithmetic::<T>()
    )
}

/// Threads per workgroup of the line kernels ([`lines`]).
pub const LINE_GROUP: u32 = 64;

/// The line kernels of a lattice composed for `spec`, precision `T`: `gather` copies the
/// stored elements of copy A at the storage indices `index[t]` into `vals[t]`, `scatter` the
/// other way, one thread a value (`t = gid.x + gid.y·groups_x·64`), as `real` (a compact
/// precision's stored `f_i − w_i`, exactly: the host adds or takes `w_i`). What moves a
/// block's border and ghost lines in one dispatch and one copy, however scattered the lines
/// lie in the layout (a line along y is a short run in every layout). Bindings: the
/// populations' as [`compose`]'s, then `index` and `vals`.
pub fn lines<T: Real>(spec: &ShaderSpec) -> String {
    let b = spec.binding_consts();
    let body = |name: &str, line: &str| {
        format!(
            "@compute @workgroup_size({LINE_GROUP})\n\
             fn {name}(@builtin(global_invocation_id) gid: vec3<u32>, \
             @builtin(num_workgroups) n: vec3<u32>) {{\n\
             \x20   let t = gid.x + gid.y * n.x * {LINE_GROUP}u;\n\
             \x20   if (t < arrayLength(&index)) {{\n        {line}\n    }}\n}}\n"
        )
    };
    types::<T>(spec)
        + &format!("const CHUNK: u32 = {}u;\n", spec.chunk.min(u32::MAX as u64))
        + &population_bindings::<T>(spec)
        + &format!(
            "@group(0) @binding({b}) var<storage, read> index: array<u32>;\n\
             @group(0) @binding({}) var<storage, read_write> vals: array<real>;\n\n",
            b + 1
        )
        + &accessors::<T>(spec)
        + &body("gather", "vals[t] = src_ld(index[t], real(0.0));")
        + &body("scatter", "src_st(index[t], real(0.0), vals[t]);")
}

/// Parses and validates a composed shader with naga (with the f64 capability when `f64`; the
/// f16 ones are always allowed, as only compact precisions' shaders use them).
pub fn validate(src: &str, f64: bool, what: &str) -> Result<(), GpuError> {
    let err = |message: String| GpuError::Shader {
        what: what.to_string(),
        message,
    };
    let module = naga::front::wgsl::parse_str(src).map_err(|e| err(e.emit_to_string(src)))?;
    // f16 storage (`SHADER_F16`) and the packed fallback's `pack2x16float` (f16 in f32,
    // which every Vulkan, Metal and DX12 device has) appear only in compact precisions' shaders.
    let half = naga::valid::Capabilities::SHADER_FLOAT16
        | naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32;
    let caps = if f64 {
        naga::valid::Capabilities::FLOAT64 | half
    } else {
        half
    };
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .validate(&module)
        .map_err(|e| err(format!("{}{}", e.emit_to_string(src), causes(&e))))?;
    Ok(())
}

/// The chain of causes of an error, one per line (naga's short diagnostic omits them).
fn causes(e: &dyn std::error::Error) -> String {
    let mut s = String::new();
    let mut cur = e.source();
    while let Some(c) = cur {
        s += &format!("caused by: {c}\n");
        cur = c.source();
    }
    s
}

fn constants(spec: &ShaderSpec, vl: usize) -> String {
    let d = &spec.dims;
    format!(
        "\nconst LX: u32 = {lx}u;\nconst LY: u32 = {ly}u;\nconst LZ: u32 = {lz}u;\n\
         const PLANE: u32 = {plane}u;\nconst H: u32 = {h}u;\n\
         const VL: u32 = {vl}u;\nconst NK: u32 = {nk}u;\nconst ROW: u32 = {row}u;\n\
         const CHUNK: u32 = {chunk}u;\nconst NSITES: u32 = {nsites}u;\nconst NBC: u32 = {nbc}u;\n\
         const COLS: u32 = {cols}u;\nconst RECS: u32 = {recs}u;\n{fields}\
         const HOLDS: u32 = RECS + NBC * REC;\nconst NHOLD: u32 = {nhold}u;\nconst HELD: u32 = {held}u;\n\
         const NHALO_EVEN: u32 = {halo_even}u;\nconst NHALO_ODD: u32 = {halo_odd}u;\nconst TERMS_LEN: u32 = {TERMS_LEN}u;\n\
         const NONE: u32 = {NONE}u;\n\n",
        fields = Field::wgsl_constants(),
        nhold = spec.bc.holds,
        halo_even = spec.bc.halo_holds[0],
        halo_odd = spec.bc.halo_holds[1],
        held = spec.held_at,
        lx = d.lx,
        ly = d.ly,
        lz = d.lz,
        plane = d.plane(),
        h = d.halo,
        vl = vl,
        nk = d.ly / vl,
        row = spec.row,
        chunk = spec.chunk.min(u32::MAX as u64),
        nsites = d.sites(),
        nbc = spec.bc.sites,
        cols = super::bc::bit_words(d),
        recs = super::bc::bit_words(d) + d.lx * d.lz + 1,
    )
}

fn bindings<T: Real>(spec: &ShaderSpec) -> String {
    let b = spec.binding_consts();
    population_bindings::<T>(spec)
        + &format!(
            "@group(0) @binding({}) var<storage, read> consts: array<real>;\n\
             @group(0) @binding({}) var<storage, read> tables: array<u32>;\n\
             @group(0) @binding({}) var<storage, read_write> mout: array<real>;\n\
             @group(0) @binding({}) var<uniform> ctl: vec4<u32>;\n\n",
            b,
            b + 1,
            b + 2,
            b + 3
        )
}

/// The populations' bindings: `a0 …` (copy A), `b0 …` (copy B, two-copy scheme).
fn population_bindings<T: Real>(spec: &ShaderSpec) -> String {
    let n = spec.chunks;
    let ty = if T::COMPACT && spec.packed_f16 {
        "array<atomic<u32>>"
    } else {
        "array<store>"
    };
    let mut s = String::new();
    for (copy, name) in [(0, "a"), (1, "b")].into_iter().take(spec.copies()) {
        for c in 0..n {
            s += &format!(
                "@group(0) @binding({}) var<storage, read_write> {name}{c}: {ty};\n",
                copy * n + c
            );
        }
    }
    s
}

/// The rest population `w_i`, the shift of population `i`'s stored values: `W{i}`.
fn rest<M: Model>() -> String {
    M::WEIGHTS
        .iter()
        .enumerate()
        .map(|(i, &w)| format!("const W{i}: real = {};\n", lit(w)))
        .collect::<String>()
        + "\n"
}

/// Copy A's accessors and copy B's (A in place), each routing a global index to its binding:
/// the raw `src_get/src_put` (`dst_…`), which move stored elements (the halo and fold
/// copies), and the value ones `src_ld(g, w)`, `src_st(g, w, v)` of an element of a
/// population whose rest value is `w` (ignored unless the precision is compact).
fn accessors<T: Real>(spec: &ShaderSpec) -> String {
    let packed = T::COMPACT && spec.packed_f16;
    // Element `o` of binding `a`, as a `store`, and its write from `v`.
    let get = |a: &str, o: &str| {
        if packed {
            format!("return (atomicLoad(&{a}[{o} >> 1u]) >> (({o} & 1u) * 16u)) & 0xffffu;")
        } else {
            format!("return {a}[{o}];")
        }
    };
    let put = |a: &str, o: &str| {
        if packed {
            format!(
                "let sh = ({o} & 1u) * 16u; atomicAnd(&{a}[{o} >> 1u], ~(0xffffu << sh)); \
                 atomicOr(&{a}[{o} >> 1u], v << sh);"
            )
        } else {
            format!("{a}[{o}] = v;")
        }
    };
    let mut s = String::new();
    let dst = if spec.copies() == 2 { "b" } else { "a" };
    for (f, arr) in [("src", "a"), ("dst", dst)] {
        if spec.chunks == 1 {
            s += &format!(
                "fn {f}_get(g: u32) -> store {{\n    {}\n}}\n\
                 fn {f}_put(g: u32, v: store) {{\n    {}\n}}\n",
                get(&format!("{arr}0"), "g"),
                put(&format!("{arr}0"), "g"),
            );
        } else {
            // CHUNK is a multiple of 64: `o` has the parity of `g`.
            let arms = |body: &dyn Fn(&str) -> String| -> String {
                (0..spec.chunks)
                    .map(|c| {
                        let label = if c + 1 == spec.chunks {
                            "default".to_string()
                        } else {
                            format!("case {c}u")
                        };
                        format!("        {label}: {{ {} }}\n", body(&format!("{arr}{c}")))
                    })
                    .collect()
            };
            s += &format!(
                "fn {f}_get(g: u32) -> store {{\n    let o = g % CHUNK;\n    switch (g / CHUNK) {{\n{}    }}\n}}\n",
                arms(&|a| get(a, "o"))
            );
            s += &format!(
                "fn {f}_put(g: u32, v: store) {{\n    let o = g % CHUNK;\n    switch (g / CHUNK) {{\n{}    }}\n}}\n",
                arms(&|a| put(a, "o"))
            );
        }
        s += &if packed {
            format!(
                "fn {f}_ld(g: u32, w: real) -> real {{\n    return unpack2x16float({f}_get(g)).x + w;\n}}\n\
                 fn {f}_st(g: u32, w: real, v: real) {{\n    {f}_put(g, pack2x16float(vec2<f32>(v - w, 0.0)) & 0xffffu);\n}}\n"
            )
        } else if T::COMPACT {
            format!(
                "fn {f}_ld(g: u32, w: real) -> real {{\n    return real({f}_get(g)) + w;\n}}\n\
                 fn {f}_st(g: u32, w: real, v: real) {{\n    {f}_put(g, store(v - w));\n}}\n"
            )
        } else {
            format!(
                "fn {f}_ld(g: u32, w: real) -> real {{\n    return {f}_get(g);\n}}\n\
                 fn {f}_st(g: u32, w: real, v: real) {{\n    {f}_put(g, v);\n}}\n"
            )
        };
    }
    s + "\n"
}

fn helpers(spec: &ShaderSpec) -> String {
    let params: Vec<String> = (0..spec.params).map(|j| format!("consts[{j}]")).collect();
    // A 2-D lattice has one line per plane: its plane site is its row.
    let yz = if spec.dims.lz == 1 {
        "    return vec2<u32>(r, 0u);\n"
    } else {
        "    let z = r / LY;\n    return vec2<u32>(r - z * LY, z);\n"
    };
    format!(
        "\nfn y_plus(y: u32, d: u32) -> u32 {{\n    let v = y + d;\n    return select(v, v - LY, v >= LY);\n}}\n\
         fn y_minus(y: u32, d: u32) -> u32 {{\n    return select(y - d, y + LY - d, y < d);\n}}\n\
         fn z_plus(z: u32, d: u32) -> u32 {{\n    let v = z + d;\n    return select(v, v - LZ, v >= LZ);\n}}\n\
         fn z_minus(z: u32, d: u32) -> u32 {{\n    return select(z - d, z + LZ - d, z < d);\n}}\n\
         fn ln(col: u32, z: u32) -> u32 {{\n    return col * LZ + z;\n}}\n\
         fn yz(r: u32) -> vec2<u32> {{\n{yz}}}\n\
         fn thread(gid: vec3<u32>) -> u32 {{\n    return gid.x + gid.y * ROW;\n}}\n\
         fn site_of(t: u32) -> vec3<u32> {{\n    let x = t / PLANE;\n    let q = yz(t - x * PLANE);\n\
         \x20   return vec3<u32>(x, site_y(q.x / VL, q.x % VL), q.y);\n}}\n\
         fn params() -> array<real, {p}> {{\n    return array<real, {p}>({list});\n}}\n",
        p = spec.params,
        list = params.join(", ")
    )
}

/// `site_params(x, y, z)`: the parameters of site `(x, y, z)`, the uniform ones with the
/// site's own field values ([`ShaderSpec::fields`]).
fn site_params<M: Model>(spec: &ShaderSpec) -> String {
    let p = spec.params;
    let mut s = format!(
        "fn site_params(x: u32, y: u32, z: u32) -> array<real, {p}> {{
    var q = params();
"
    );
    if let Some(at) = spec.fields {
        s += "    let s = x * PLANE + z * LY + y;
";
        for (j, k) in M::FIELD_PARAMS.iter().enumerate() {
            s += &format!(
                "    q[{k}] = consts[{at}u + {j}u * NSITES + s];
"
            );
        }
    }
    s + "    return q;
}
"
}

/// The coordinate `v − d` of axis `v` (`y` or `z`) on its periodic ring, as WGSL.
fn shifted(v: &str, d: i32) -> String {
    match d {
        0 => v.to_string(),
        d if d > 0 => format!("{v}_minus({v}, {d}u)"),
        d => format!("{v}_plus({v}, {}u)", -d),
    }
}

/// The storage line and row of the site `(x, y, z) − (·, c_y, c_z)` in storage column
/// `col` (an expression), as WGSL arguments of `idx`.
fn line_row(col: &str, c: [i32; 3]) -> String {
    format!("ln({col}, {}), {}", shifted("z", c[2]), shifted("y", c[1]))
}

/// `pull(x, y, z)`: `g_i = A_i(x − c_i)` (storage column `x + H − c_ix`), unrolled over `i`.
fn pull<M: Model>() -> String {
    let q = M::Q;
    let mut s = format!(
        "fn pull(x: u32, y: u32, z: u32) -> array<real, {q}> {{\n    var g: array<real, {q}>;\n"
    );
    for (i, c) in M::VELOCITIES.iter().enumerate() {
        let col = format!("x + {}u", M::HALO as i32 - c[0]);
        s += &format!(
            "    g[{i}] = src_ld(idx({i}u, {}), W{i});\n",
            line_row(&col, *c)
        );
    }
    s + "    return g;\n}\n"
}

/// The boundary code: site lookup, bounced links, rules.
fn boundary<M: Model>(spec: &ShaderSpec) -> String {
    let q = M::Q;
    let mut s = String::from(
        "\nfn bc_site(x: u32, y: u32, z: u32) -> u32 {\n    let line = ln(x, z);\n    let s = line * LY + y;\n\
         \x20   if (((tables[s >> 5u] >> (s & 31u)) & 1u) == 0u) { return NONE; }\n\
         \x20   var lo = tables[COLS + line];\n    var hi = tables[COLS + line + 1u];\n\
         \x20   loop {\n        if (lo >= hi) { break; }\n        let mid = (lo + hi) / 2u;\n\
         \x20       let ym = tables[RECS + mid * REC + REC_Y];\n        if (ym == y) { return mid; }\n\
         \x20       if (ym < y) { lo = mid + 1u; } else { hi = mid; }\n    }\n    return NONE;\n}\n",
    );
    // Bounced links read the site's own opposite population in A, interpolated on a curved
    // wall (the terms of `boundary::link`, their weights `consts[ip + TERMS_LEN·i + k]`; a
    // term of weight 0 is not read), plus the wall correction.
    s += &format!(
        "fn links(r: u32, x: u32, y: u32, z: u32, g_in: array<real, {q}>) -> array<real, {q}> {{\n\
         \x20   var g = g_in;\n    let b = RECS + r * REC;\n    let m0 = tables[b + REC_MASK_LO];\n    let m1 = tables[b + REC_MASK_HI];\n\
         \x20   let co = tables[b + REC_CORR];\n    let ip = tables[b + REC_INTERP];\n    let col = ln(x + H, z);\n"
    );
    for (i, c) in M::VELOCITIES.iter().enumerate() {
        let (w, bit) = (i / 32, i % 32);
        let read = |t: Term| {
            let p = t.pop.of::<M>(i);
            let step = t.offset(*c);
            // A term that wraps reads the lattice's own columns, `(x + s c_x) mod LX` (in u32
            // arithmetic, whatever it wraps to, below LX).
            let col = match (t.wraps(), step[0]) {
                (true, dx) if dx >= 0 => format!("(x + {dx}u) % LX + H"),
                (true, dx) => format!("(x + LX - {}u) % LX + H", -dx),
                (false, dx) => format!("x + {}u", M::HALO as i32 + dx),
            };
            let at = match step == [0; 3] {
                true => "col, y".to_string(),
                false => line_row(&col, step.map(|v| -v)),
            };
            format!("src_ld(idx({p}u, {at}), W{p})")
        };
        // In place, the terms beyond the site's own slots are those held before the half-step.
        let term = |k: usize, t: Term| match spec.scheme {
            Scheme::InPlace if k >= OWN_SLOTS => format!("held(b, {i}u, {k}u)"),
            _ => read(t),
        };
        let curved = if spec.bc.curved {
            let terms: String = (TERMS.iter().enumerate().skip(1))
                .map(|(k, &t)| {
                    format!(
                        "            let w{k} = consts[k + {k}u];\n\
                         \x20           if (w{k} != real(0.0)) {{ v = v + w{k} * {}; }}\n",
                        term(k, t)
                    )
                })
                .collect();
            format!(
                "        if (ip != NONE) {{\n            let k = ip + {at}u;\n            v = consts[k] * v;\n{terms}        }}\n",
                at = TERMS_LEN * i
            )
        } else {
            String::new()
        };
        s += &format!(
            "    if (((m{w} >> {bit}u) & 1u) != 0u) {{\n        var v = {};\n{curved}\
             \x20       if (co != NONE) {{ v = v + consts[co + {i}u]; }}\n        g[{i}] = v;\n    }}\n",
            read(TERMS[0])
        );
    }
    s += "    return g;\n}\n";
    s += "fn bounced(r: u32, i: u32) -> bool {\n    let b = RECS + r * REC;\n\
          \x20   return ((tables[b + REC_MASK_LO + (i >> 5u)] >> (i & 31u)) & 1u) != 0u;\n}\n\
          fn held(b: u32, i: u32, k: u32) -> real {\n    let h = tables[b + REC_HELD];\n\
          \x20   if (h == NONE) { return real(0.0); }\n    return mout[HELD + h + TERMS_LEN * i + k];\n}\n";
    s += &local_links::<M>(spec);
    s += &rules::<M>(spec);
    s
}

/// `local_links(r, g)`: the bounced links of boundary record `r` in the AA local half-step,
/// whose gathered `g_i = F_ī(x)` is already `f*_ī(x)`, half-way bounce-back's value: an
/// interpolated link weighs it with `f*_ī(x + c_i)`, gathered as `g_ī`, and its other terms
/// held before the half-step, as the CPU's `kernels::local_site_bc`; then the moving wall's
/// correction.
fn local_links<M: Model>(spec: &ShaderSpec) -> String {
    let q = M::Q;
    let mut s = format!(
        "fn local_links(r: u32, g_in: array<real, {q}>) -> array<real, {q}> {{\n    var g = g_in;\n\
         \x20   let b = RECS + r * REC;\n    let co = tables[b + REC_CORR];\n    let ip = tables[b + REC_INTERP];\n"
    );
    if !spec.bc.curved {
        return s + "    if (co == NONE) { return g; }\n    for (var i = 0u; i < "
            + &format!("{q}u; i = i + 1u) {{\n        if (bounced(r, i)) {{ g[i] = g[i] + consts[co + i]; }}\n    }}\n    return g;\n}}\n");
    }
    for i in 0..q {
        let o = M::OPPOSITE[i];
        let held: String = (OWN_SLOTS..TERMS_LEN)
            .map(|k| {
                format!(
                    "            let w{k} = consts[k + {k}u];\n\
                     \x20           if (w{k} != real(0.0)) {{ v = v + w{k} * held(b, {i}u, {k}u); }}\n"
                )
            })
            .collect();
        s += &format!(
            "    if (bounced(r, {i}u)) {{\n        var v = g_in[{i}u];\n\
             \x20       if (ip != NONE) {{\n            let k = ip + {at}u;\n\
             \x20           v = consts[k] * g_in[{i}u];\n\
             \x20           let w1 = consts[k + 1u];\n\
             \x20           if (w1 != real(0.0)) {{ v = v + w1 * g_in[{o}u]; }}\n{held}        }}\n\
             \x20       if (co != NONE) {{ v = v + consts[co + {i}u]; }}\n        g[{i}u] = v;\n    }}\n",
            at = TERMS_LEN * i
        );
    }
    s + "    return g;\n}\n"
}

/// `rule(r, g)`: the site's rule applied to its pre-collision populations, one function per
/// rule kind the lattice has (`gpu::rules`).
fn rules<M: Model>(spec: &ShaderSpec) -> String {
    let q = M::Q;
    let mut arms = String::new();
    let mut funcs = String::new();
    for kind in Kind::all().filter(|k| spec.bc.rules >> k.code() & 1 == 1) {
        let c = kind.code();
        funcs += &super::rules::function::<M>(&kind.program::<M>(), &format!("rule_{c}"));
        arms += &format!(
            "        case {c}u: {{ return rule_{c}(g, tables[b + REC_VALUE], tables[b + REC_LINKS]); }}\n"
        );
    }
    format!(
        "{funcs}fn rule(r: u32, g: array<real, {q}>) -> array<real, {q}> {{\n    let b = RECS + r * REC;\n\
         \x20   switch (tables[b + REC_RULE]) {{\n{arms}        default: {{ return g; }}\n    }}\n}}\n"
    )
}

/// `gather(x, y, z)`: the pre-collision populations (pull, then links and rules of a boundary
/// site); `load_dst` / `store_dst`: one site of copy B.
fn gather<M: Model>(spec: &ShaderSpec) -> String {
    let q = M::Q;
    let bc = if spec.bc.sites > 0 {
        "    let r = bc_site(x, y, z);\n    if (r != NONE) { g = rule(r, links(r, x, y, z, g)); }\n"
    } else {
        ""
    };
    format!(
        "fn gather(x: u32, y: u32, z: u32) -> array<real, {q}> {{\n    var g = pull(x, y, z);\n{bc}    return g;\n}}\n"
    )
}

fn site_io<M: Model>() -> String {
    let q = M::Q;
    let mut ld = format!(
        "fn load_dst(x: u32, y: u32, z: u32) -> array<real, {q}> {{\n\
         \x20   let b = col_base(ln(x + H, z), y);\n    var g: array<real, {q}>;\n"
    );
    let mut st = format!(
        "fn store_dst(x: u32, y: u32, z: u32, h: array<real, {q}>) {{\n\
         \x20   let b = col_base(ln(x + H, z), y);\n"
    );
    for i in 0..q {
        ld += &format!("    g[{i}] = dst_ld(b + idx({i}u, 0u, 0u), W{i});\n");
        st += &format!("    dst_st(b + idx({i}u, 0u, 0u), W{i}, h[{i}]);\n");
    }
    ld + "    return g;\n}\n" + &st + "}\n"
}

/// The entry points every scheme has (halo, moments) and those of the two-copy scheme.
fn entries<M: Model>(spec: &ShaderSpec) -> String {
    let q = M::Q;
    let mut s = String::new();
    // Halo: thread j·PLANE + r copies site r of halo plane j from its periodic image.
    s += &head("halo", "2u * H * PLANE", FIXED);
    s += &format!(
        "    let j = t / PLANE;\n    let q = yz(t - j * PLANE);\n    let y = q.x;\n    let z = q.y;\n    var from_col = H + j;\n    var to_col = H + LX + j;\n\
         \x20   if (j >= H) {{\n        let jj = j - H;\n        from_col = H + LX - 1u - jj;\n        to_col = H - 1u - jj;\n    }}\n\
         \x20   for (var i = 0u; i < {q}u; i = i + 1u) {{\n        src_put(idx(i, ln(to_col, z), y), src_get(idx(i, ln(from_col, z), y)));\n    }}\n}}\n"
    );
    s += &moments_entry::<M>("moments", "gather");
    s += &pre_collision_entry::<M>("pre_collision", "gather", spec);
    if spec.scheme == Scheme::InPlace {
        return s;
    }
    s += &site_io::<M>();
    s += &head("propagate", "NSITES", FIXED);
    s += "    let p = site_of(t);\n    store_dst(p.x, p.y, p.z, pull(p.x, p.y, p.z));\n}\n";
    s += &head("bc", "NBC", FIXED);
    if spec.bc.sites > 0 {
        s += "    let b = RECS + t * REC;\n    let x = tables[b + REC_LINE] / LZ;\n    let z = tables[b + REC_LINE] % LZ;\n\
              \x20   let y = tables[b + REC_Y];\n\
              \x20   store_dst(x, y, z, rule(t, links(t, x, y, z, load_dst(x, y, z))));\n}\n";
    } else {
        s += "}\n";
    }
    s += &head("collide", "NSITES", FIXED);
    s += "    let p = site_of(t);\n    store_dst(p.x, p.y, p.z, lbm_collide(load_dst(p.x, p.y, p.z), site_params(p.x, p.y, p.z)));\n}\n";
    s += &site_entries(
        spec,
        Entry::Fused,
        "    store_dst(p.x, p.y, p.z, lbm_collide(gather(p.x, p.y, p.z), site_params(p.x, p.y, p.z)));\n",
    );
    s
}

/// The entry points of site kernel `e` whose `body` updates site `p`: over every site, and
/// over the bulk and border columns when the spec has [`Window`]s, each at every workgroup
/// size of [`SIZES`] ([`entry_name`]).
fn site_entries(spec: &ShaderSpec, e: Entry, body: &str) -> String {
    let mut s = String::new();
    for &w in spec.windows() {
        let (guard, site) = match w {
            Window::All => ("NSITES", "    let p = site_of(t);\n"),
            Window::Bulk => (
                "(LX - 2u * H) * PLANE",
                "    let p = site_of(t) + vec3<u32>(H, 0u, 0u);\n",
            ),
            Window::Border => (
                "2u * H * PLANE",
                "    var p = site_of(t);\n    if (p.x >= H) { p.x = p.x + LX - 2u * H; }\n",
            ),
        };
        for size in SIZES {
            s += &(head(&entry_name(e, w, size), guard, size) + site + body + "}\n");
        }
    }
    s
}

/// The WGSL name of window `w` of entry point `e`: a site kernel has one per workgroup size
/// (`fused_wg64`, `aa_pull_bulk_wg128`, …), the other entry points run [`FIXED`] threads and
/// ignore `size`.
///
/// One entry point per size, rather than WGSL's pipeline-overridable workgroup size: an
/// `override` sends every pipeline through naga's override processing, which rejected these
/// shaders' boundary functions (wgpu 30: "Pipeline constant error: Function 'zou_he_2' is
/// invalid"); a module without overrides skips it. The extra entry points are a few lines
/// each, calling the shared functions.
pub fn entry_name(e: Entry, w: Window, size: u32) -> String {
    if e.is_site_kernel() {
        format!("{}{}_wg{size}", e.name(), w.suffix())
    } else {
        format!("{}{}", e.name(), w.suffix())
    }
}

/// The head of an entry point over `guard` threads in workgroups of `size`.
fn head(name: &str, guard: &str, size: u32) -> String {
    format!(
        "\n@compute @workgroup_size({size})\nfn {name}(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
         \x20   let t = thread(gid);\n    if (t >= {guard}) {{ return; }}\n"
    )
}

/// Entry `name`: the moments of columns `ctl.x .. ctl.x + ctl.y` from the populations that
/// `gather` collects, written as `mout[t·NM + j]`.
fn moments_entry<M: Model>(name: &str, gather: &str) -> String {
    let nm = M::MOMENT_NAMES.len();
    head(name, "ctl.y * PLANE", FIXED)
        + &format!(
            "    let p = site_of(t);\n    let x = p.x + ctl.x;\n    let m = lbm_moments({gather}(x, p.y, p.z), site_params(x, p.y, p.z));\n\
             \x20   let o = (p.x * PLANE + p.z * LY + p.y) * {nm}u;\n{}}}\n",
            (0..nm).map(|j| format!("    mout[o + {j}u] = m[{j}];\n")).collect::<String>()
        )
}

/// Entry `name`: the pre-collision populations that `gather` collects at the sites of the
/// boundary records `ctl.x .. ctl.x + ctl.y`, written as `mout[t·Q + i]` (what the walls send
/// back into the fluid, [`crate::Lattice::exchanged`]).
fn pre_collision_entry<M: Model>(name: &str, gather: &str, spec: &ShaderSpec) -> String {
    let q = M::Q;
    let mut s = head(name, "ctl.y", FIXED);
    if spec.bc.sites > 0 {
        s += &format!(
            "    let b = RECS + (ctl.x + t) * REC;\n    let line = tables[b + REC_LINE];\n    let g = {gather}(line / LZ, tables[b + REC_Y], line % LZ);\n"
        );
        s += &(0..q)
            .map(|i| format!("    mout[t * {q}u + {i}u] = g[{i}];\n"))
            .collect::<String>();
    }
    s + "}\n"
}

/// The in-place (AA) half-steps, the fold of the periodic halos and the odd-state moments.
fn in_place<M: Model>(spec: &ShaderSpec) -> String {
    let q = M::Q;
    let bc = spec.bc.sites > 0;
    // gather_local: g_i = F_ī(x), then the wall corrections and rules of a boundary site.
    let mut s = format!(
        "\nfn gather_local(x: u32, y: u32, z: u32) -> array<real, {q}> {{\n    var g: array<real, {q}>;\n    let col = ln(x + H, z);\n"
    );
    for i in 0..q {
        s += &format!(
            "    g[{i}] = src_ld(idx({o}u, col, y), W{o});\n",
            o = M::OPPOSITE[i]
        );
    }
    if bc {
        s += "    let r = bc_site(x, y, z);\n    if (r != NONE) { g = rule(r, local_links(r, g)); }\n";
    }
    s += "    return g;\n}\n";
    // push: F_ī(x + c_i) = h_i, or F_i(x) when link ī of a boundary site is bounced.
    s += &format!("fn push(x: u32, y: u32, z: u32, h: array<real, {q}>) {{\n");
    if bc {
        s += "    let r = bc_site(x, y, z);\n";
    }
    for (i, c) in M::VELOCITIES.iter().enumerate() {
        let o = M::OPPOSITE[i];
        let col = format!("x + {}u", M::HALO as i32 + c[0]);
        let away = format!(
            "src_st(idx({o}u, {}), W{o}, h[{i}]);",
            line_row(&col, c.map(|v| -v))
        );
        s += &if bc {
            format!(
                "    if (r != NONE && bounced(r, {o}u)) {{ src_st(idx({i}u, ln(x + H, z), y), W{i}, h[{i}]); }} else {{ {away} }}\n"
            )
        } else {
            format!("    {away}\n")
        };
    }
    s += "}\n";
    s += &site_entries(
        spec,
        Entry::AaPull,
        "    push(p.x, p.y, p.z, lbm_collide(gather(p.x, p.y, p.z), site_params(p.x, p.y, p.z)));\n",
    );
    s += &site_entries(
        spec,
        Entry::AaLocal,
        &format!(
            "    let h = lbm_collide(gather_local(p.x, p.y, p.z), site_params(p.x, p.y, p.z));\n    let col = ln(p.x + H, p.z);\n{}",
            (0..q)
                .map(|i| format!("    src_st(idx({i}u, col, p.y), W{i}, h[{i}]);\n"))
                .collect::<String>()
        ),
    );
    s += &fold::<M>("fold", bc, Pusher::Own);
    if spec.slab {
        s += &fold::<M>("fold_in", bc, Pusher::Neighbour);
    }
    s += &pre_collision_entry::<M>("pre_collision_odd", "gather_local", spec);
    s += &moments_entry::<M>("moments_odd", "gather_local");
    s + &hold::<M>()
}

/// The entries `hold_even` and `hold_odd`: thread `t` holds the population of entry `t` of
/// the state's held populations ([`super::bc::pack`]) in `mout[HELD + at]`; `hold_halo_*`
/// those of the state's last entries, in halo columns.
fn hold<M: Model>() -> String {
    let cases: String = (0..M::Q)
        .map(|p| format!("        case {p}u: {{ return src_ld(at, W{p}); }}\n"))
        .collect();
    let mut s = format!(
        "fn held_population(e: u32) -> real {{\n\
         \x20   let at = idx(tables[e + 1u], ln(tables[e + 2u], tables[e + 3u]), tables[e + 4u]);\n\
         \x20   switch (tables[e + 1u]) {{\n{cases}        default: {{ return real(0.0); }}\n    }}\n}}\n"
    );
    for (name, first, count) in [
        ("hold_even", "0u", "NHOLD"),
        ("hold_odd", "NHOLD", "NHOLD"),
        ("hold_halo_even", "NHOLD - NHALO_EVEN", "NHALO_EVEN"),
        ("hold_halo_odd", "2u * NHOLD - NHALO_ODD", "NHALO_ODD"),
    ] {
        s += &head(name, count, FIXED);
        s += &format!(
            "    let e = HOLDS + ({first} + t) * {HOLD}u;\n    mout[HELD + tables[e]] = held_population(e);\n}}\n"
        );
    }
    s
}

/// Whose push a fold moves: the lattice's own (periodic x) or a neighbouring slab's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pusher {
    Own,
    Neighbour,
}

/// The fold after `aa_pull`: thread `j·PLANE + r` moves site `r` of halo plane `LX + j` (the
/// populations with `c_x < −j`) to column `j`, or for `j ≥ H` of halo column `−1 − jj`
/// (`c_x > jj`, `jj = j − H`) to `LX − 1 − jj` — except where the link was bounced, as
/// [`crate::kernels`]' `fold_halo`. `fold` (periodic x): the halos hold what the lattice's own
/// opposite border pushed, and the pushing site `from + c_p` is checked. `fold_in` (a slab):
/// the host wrote the left neighbour's pushed right halo into the right halo columns and the
/// right neighbour's left halo into the left ones ([`crate::domain::folded`]' layout); the
/// receiving site is checked (link `p̄`; the masks are symmetric), and `ctl.z` bit 0 / bit 1
/// says whether the left / right border receives at all.
fn fold<M: Model>(name: &str, bc: bool, pusher: Pusher) -> String {
    let mut right = String::new();
    let mut left = String::new();
    for (p, c) in M::VELOCITIES.iter().enumerate() {
        let pushed_row = format!("{}, {}", shifted("y", -c[1]), shifted("z", -c[2]));
        let moved = |from: &str, to: &str, site: String| {
            let copy = format!(
                "src_put(idx({p}u, ln({to}, z), y), src_get(idx({p}u, ln({from}, z), y)));"
            );
            let (row, link) = match pusher {
                Pusher::Own => (pushed_row.as_str(), p),
                Pusher::Neighbour => ("y, z", M::OPPOSITE[p]),
            };
            if bc {
                format!(
                    "{{\n            let r = bc_site({site}, {row});\n            \
                     if (r == NONE || !bounced(r, {link}u)) {{ {copy} }}\n        }}"
                )
            } else {
                format!("{{ {copy} }}")
            }
        };
        if c[0] < 0 {
            let site = match pusher {
                Pusher::Own => format!("LX + j - {}u", -c[0]),
                Pusher::Neighbour => "j".to_string(),
            };
            right += &format!(
                "        if (j < {}u) {}\n",
                -c[0],
                moved("H + LX + j", "H + j", site)
            );
        }
        if c[0] > 0 {
            let site = match pusher {
                Pusher::Own => format!("{}u - 1u - jj", c[0]),
                Pusher::Neighbour => "LX - 1u - jj".to_string(),
            };
            left += &format!(
                "        if (jj < {}u) {}\n",
                c[0],
                moved("H - 1u - jj", "H + LX - 1u - jj", site)
            );
        }
    }
    let (skip_right, skip_left) = match pusher {
        Pusher::Own => ("", ""),
        Pusher::Neighbour => (
            "        if ((ctl.z & 1u) == 0u) { return; }\n",
            "        if ((ctl.z & 2u) == 0u) { return; }\n",
        ),
    };
    head(name, "2u * H * PLANE", FIXED)
        + &format!(
            "    let j = t / PLANE;\n    let q = yz(t - j * PLANE);\n    let y = q.x;\n    let z = q.y;\n    if (j < H) {{\n{skip_right}{right}    }} else {{\n\
             \x20       let jj = j - H;\n{skip_left}{left}    }}\n}}\n"
        )
}
