//! Fields per site (parameters declared `field`) and coupled lattices, checked against the
//! per-site reference: every layout and both schemes give, site by site, the generated
//! single-site collision with that site's own parameters ([`Model::with_fields`]), bitwise; a
//! uniform field equals the parameter; bad fields and links are refused with a message.

use lbm::models::{D2Q5AdvectionDiffusion, D2Q9Bgk, D2Q9Boussinesq, D2Q9BoussinesqParams};
use lbm::{
    Aos, BoundarySpec, CAoSoa, CSoa, Coupled, Lattice, Layout, Model, Real, Scheme, Soa, Wall,
};

const LX: usize = 12;
const LY: usize = 16;

/// A smooth, site-dependent value in `[-1, 1]`.
fn wave(x: usize, y: usize, k: f64) -> f64 {
    (k * x as f64 + 0.37 * k * y as f64 + 0.2).sin()
}

fn flow_params() -> D2Q9BoussinesqParams {
    D2Q9BoussinesqParams {
        tau: 0.7,
        magic: 3.0 / 16.0,
        g_beta: 1e-3,
        t_ref: 0.1,
        T: 0.0,
    }
}

/// A non-equilibrium state, each model's own moments varying per site.
fn state<M: Model, L: Layout, T: Real>(lat: &mut Lattice<M, L, T>) {
    let nm = M::MOMENT_NAMES.len();
    lat.set_equilibrium(|x, y| {
        (0..nm)
            .map(|j| {
                if j == 0 {
                    1.0 + 0.05 * wave(x, y, 0.9)
                } else {
                    0.03 * wave(x, y, 0.5 + j as f64)
                }
            })
            .collect()
    })
    .unwrap();
    let mut f = vec![T::default(); M::Q];
    for x in 0..LX {
        for y in 0..LY {
            lat.populations(x, y, &mut f).unwrap();
            for (i, fi) in f.iter_mut().enumerate() {
                *fi *= T::from_f64(1.0 + 0.02 * wave(x + i, y, 1.3));
            }
            lat.set_populations(x, y, &f).unwrap();
        }
    }
}

/// One step of `M` on a periodic lattice in layout `L`, with per-site fields, against the
/// reference: pull `g_i(x) = f_i(x − c_i)`, then `M::collide(g, with_fields(params, field(x)))`.
fn matches_the_site_reference<M: Model, L: Layout, T: Real>(params: M::Params) {
    let mut lat = Lattice::<M, L, T>::new(
        LX,
        LY,
        params.clone(),
        Scheme::TwoCopy,
        &BoundarySpec::periodic(),
    )
    .unwrap();
    state(&mut lat);
    let fields: Vec<Vec<f64>> = (0..M::FIELDS.len())
        .map(|j| {
            (0..LX * LY)
                .map(|s| 0.05 * wave(s / LY, s % LY, 0.7 + 0.3 * j as f64))
                .collect()
        })
        .collect();
    for (name, values) in M::FIELDS.iter().zip(&fields) {
        lat.set_field(name, values).unwrap();
        let stored: Vec<f64> = values.iter().map(|&v| T::from_f64(v).to_f64()).collect();
        assert!(lat.field(name).unwrap() == stored, "{name} read back");
    }
    let mut before = vec![vec![T::default(); M::Q]; LX * LY];
    for (s, f) in before.iter_mut().enumerate() {
        lat.populations(s / LY, s % LY, f).unwrap();
    }
    lat.step();
    let mut got = vec![T::default(); M::Q];
    for s in 0..LX * LY {
        let (x, y) = (s / LY, s % LY);
        let mut g: Vec<T> = (0..M::Q)
            .map(|i| {
                let c = M::VELOCITIES[i];
                let sx = (x as i32 - c[0]).rem_euclid(LX as i32) as usize;
                let sy = (y as i32 - c[1]).rem_euclid(LY as i32) as usize;
                before[sx * LY + sy][i]
            })
            .collect();
        let own: Vec<f64> = fields.iter().map(|f| f[s]).collect();
        M::collide(&mut g, &M::with_fields(&params, &own));
        lat.populations(x, y, &mut got).unwrap();
        assert!(
            got == g,
            "{} {} {}: site ({x}, {y})",
            M::NAME,
            L::NAME,
            T::NAME
        );
    }
}

#[test]
fn per_site_fields_give_the_site_collision_in_every_layout() {
    let scalar = lbm::models::D2Q5AdvectionDiffusionParams {
        tau: 0.8,
        ux: 0.0,
        uy: 0.0,
    };
    macro_rules! each {
        ($($l:ty),*) => {$(
            matches_the_site_reference::<D2Q5AdvectionDiffusion, $l, f64>(scalar);
            matches_the_site_reference::<D2Q5AdvectionDiffusion, $l, f32>(scalar);
            matches_the_site_reference::<D2Q9Boussinesq, $l, f64>(flow_params());
            matches_the_site_reference::<D2Q9Boussinesq, $l, f32>(flow_params());
        )*};
    }
    each!(Aos, Soa, CSoa<4>, CAoSoa<8>);
}

/// A coupled pair with walls, in layout `L` and `scheme`.
fn coupled_pair<L: Layout>(
    scheme: Scheme,
) -> Coupled<Lattice<D2Q9Boussinesq, L, f64>, Lattice<D2Q5AdvectionDiffusion, L, f64>> {
    let mut flow = Lattice::<D2Q9Boussinesq, L, f64>::new(
        LX,
        LY,
        flow_params(),
        scheme,
        &BoundarySpec::channel(),
    )
    .unwrap();
    let heat_walls = BoundarySpec {
        bottom: Some(Wall::Dirichlet { value: 0.5 }),
        top: Some(Wall::Dirichlet { value: -0.5 }),
        ..BoundarySpec::default()
    };
    let mut heat = Lattice::<D2Q5AdvectionDiffusion, L, f64>::new(
        LX,
        LY,
        lbm::models::D2Q5AdvectionDiffusionParams {
            tau: 0.7,
            ux: 0.0,
            uy: 0.0,
        },
        scheme,
        &heat_walls,
    )
    .unwrap();
    state(&mut flow);
    state(&mut heat);
    Coupled::new(flow, heat)
        .unwrap()
        .first_reads("T", "phi")
        .unwrap()
        .second_reads("ux", "ux")
        .unwrap()
        .second_reads("uy", "uy")
        .unwrap()
}

/// Both lattices' populations, in logical order.
fn pair_populations<A: lbm::Solver, B: lbm::Solver>(
    c: &Coupled<A, B>,
) -> (Vec<A::Real>, Vec<B::Real>) {
    let f = c.first().local_populations().unwrap();
    let g = c.second().local_populations().unwrap();
    (f, g)
}

/// The coupled pair of [`coupled_pair`] after `steps` steps: the flow's and the temperature's
/// populations, in logical order.
fn coupled_run<L: Layout>(scheme: Scheme, steps: u64) -> (Vec<f64>, Vec<f64>) {
    let mut c = coupled_pair::<L>(scheme);
    c.advance(steps).unwrap();
    c.check().unwrap();
    pair_populations(&c)
}

/// A coupled pair's checkpoint is one set: a run killed after writing the new set's parts but
/// before its manifest resumes from the previous set, bitwise; the next set keeps the one it
/// replaced and removes the parts no manifest names.
#[test]
fn a_coupled_checkpoint_is_one_atomic_set() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let name = "pair_checkpoint.lbm";
    let files = |dir: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let mut c = coupled_pair::<Soa>(Scheme::TwoCopy);
    c.advance(3).unwrap();
    c.write_checkpoint_about(&a.path().join(name), &Default::default())
        .unwrap();
    // The manifest, two parts and a shard each.
    assert_eq!(files(a.path()).len(), 5, "{:?}", files(a.path()));
    for f in files(a.path()) {
        std::fs::copy(a.path().join(&f), b.path().join(&f)).unwrap();
    }
    let at_3 = pair_populations(&c);
    c.advance(2).unwrap();
    c.write_checkpoint_about(&a.path().join(name), &Default::default())
        .unwrap();
    // `a` keeps the set it replaced beside the new one: its manifest as `.previous`, its
    // parts and their shards.
    assert_eq!(files(a.path()).len(), 10, "{:?}", files(a.path()));
    // `b`: the crash between the new parts and the new manifest.
    for f in files(a.path()).into_iter().filter(|f| f != name) {
        std::fs::copy(a.path().join(&f), b.path().join(&f)).unwrap();
    }
    assert_eq!(files(b.path()).len(), 10);
    let mut d = coupled_pair::<CAoSoa<8>>(Scheme::InPlace);
    d.restore(&b.path().join(name)).unwrap();
    assert_eq!(d.steps_done(), 3);
    assert_eq!(pair_populations(&d), at_3);
    d.advance(2).unwrap();
    assert_eq!(pair_populations(&d), pair_populations(&c));
    d.write_checkpoint_about(&b.path().join(name), &Default::default())
        .unwrap();
    // The new set and the one it replaced; the parts of the crashed one, which no manifest
    // names, are gone.
    assert_eq!(files(b.path()).len(), 10, "{:?}", files(b.path()));
    // A part of a set alone is one lattice's checkpoint, refused as a set by name.
    let part = files(b.path())
        .into_iter()
        .find(|f| f.ends_with(".first"))
        .unwrap();
    let e = d.restore(&b.path().join(part)).unwrap_err().to_string();
    assert!(
        e.contains("the checkpoint of one lattice (the model D2Q9Boussinesq)"),
        "{e}"
    );
}

#[test]
fn coupled_lattices_agree_across_layouts_and_schemes() {
    let reference = coupled_run::<Soa>(Scheme::TwoCopy, 6);
    for (name, got) in [
        ("AoS in place", coupled_run::<Aos>(Scheme::InPlace, 6)),
        (
            "CSoA<4> two-copy",
            coupled_run::<CSoa<4>>(Scheme::TwoCopy, 6),
        ),
        (
            "CAoSoA<8> in place",
            coupled_run::<CAoSoa<8>>(Scheme::InPlace, 6),
        ),
    ] {
        assert!(got == reference, "{name}");
    }
}

#[test]
fn a_uniform_field_equals_the_parameter() {
    let p = flow_params();
    let run = |set: bool| {
        let mut lat = Lattice::<D2Q9Boussinesq, CAoSoa<8>, f64>::new(
            LX,
            LY,
            D2Q9BoussinesqParams { T: 0.4, ..p },
            Scheme::InPlace,
            &BoundarySpec::channel(),
        )
        .unwrap();
        state(&mut lat);
        if set {
            lat.set_field("T", &vec![0.4; LX * LY]).unwrap();
        }
        lat.run(4, 0).unwrap();
        lat.moment_field("uy").unwrap()
    };
    assert_eq!(run(true), run(false));
}

#[test]
fn the_dirichlet_wall_holds_the_linear_conduction_profile() {
    // Pure diffusion between walls at +½ and −½, half-way below row 0 and above row LY − 1:
    // the steady state is T = ½ − (y + ½)/LY, exactly, whatever τ.
    for tau in [0.6, 1.3] {
        let walls = BoundarySpec {
            bottom: Some(Wall::Dirichlet { value: 0.5 }),
            top: Some(Wall::Dirichlet { value: -0.5 }),
            ..BoundarySpec::default()
        };
        let params = lbm::models::D2Q5AdvectionDiffusionParams {
            tau,
            ux: 0.0,
            uy: 0.0,
        };
        let mut lat = Lattice::<D2Q5AdvectionDiffusion, Soa, f64>::new(
            4,
            LY,
            params,
            Scheme::InPlace,
            &walls,
        )
        .unwrap();
        lat.run(20_000, 0).unwrap();
        let t = lat.moment_field("phi").unwrap();
        for (s, v) in t.iter().enumerate() {
            let y = s % LY;
            let exact = 0.5 - (y as f64 + 0.5) / LY as f64;
            assert!(
                (v - exact).abs() < 1e-10,
                "τ = {tau}, row {y}: {v} vs {exact}"
            );
        }
    }
}

#[test]
fn bad_fields_and_links_are_refused_with_a_message() {
    let mut lat = Lattice::<D2Q9Boussinesq, Soa, f64>::new(
        LX,
        LY,
        flow_params(),
        Scheme::TwoCopy,
        &BoundarySpec::channel(),
    )
    .unwrap();
    let err = |r: Result<(), lbm::LbmError>| r.unwrap_err().to_string();
    let e = err(lat.set_field("Temp", &vec![0.0; LX * LY]));
    assert!(
        e.contains("no field `Temp`") && e.contains("its fields: T"),
        "{e}"
    );
    let e = err(lat.set_field("T", &[0.0; 3]));
    assert!(e.contains("got 3 values, expected 192"), "{e}");
    let mut nan = vec![0.0; LX * LY];
    nan[17] = f64::NAN;
    let e = err(lat.set_field("T", &nan));
    assert!(e.contains("not finite") && e.contains("(1, 1)"), "{e}");
    let mut plain = bgk(&BoundarySpec::periodic()).unwrap();
    let e = err(plain.set_field("ax", &vec![0.0; LX * LY]));
    assert!(e.contains("declares no `field` parameter"), "{e}");

    let heat = || scalar(LY).unwrap();
    let link = |f: &str, m: &str| {
        Coupled::new(plain_flow(), heat())
            .unwrap()
            .second_reads(f, m)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(link("vx", "ux").contains("no field `vx` to couple (its fields: ux, uy)"));
    assert!(link("ux", "vx").contains("no moment `vx` (its moments: rho, ux, uy)"));
    let twice = Coupled::new(plain_flow(), heat())
        .unwrap()
        .second_reads("ux", "ux")
        .unwrap()
        .second_reads("ux", "uy")
        .err()
        .unwrap()
        .to_string();
    assert!(twice.contains("coupled twice"), "{twice}");
    let small = scalar(8).unwrap();
    let e = Coupled::new(plain_flow(), small).err().unwrap().to_string();
    assert!(e.contains("must cover the same grid"), "{e}");
    // A Dirichlet wall needs a transport model.
    let e = bgk(&BoundarySpec {
        bottom: Some(Wall::Dirichlet { value: 1.0 }),
        top: Some(Wall::Dirichlet { value: 0.0 }),
        ..BoundarySpec::default()
    })
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("a Dirichlet wall holds the scalar of a transport model")
            && e.contains("has a velocity moment"),
        "{e}"
    );
}

fn plain_flow() -> Lattice<D2Q9Boussinesq, Soa, f64> {
    Lattice::new(
        LX,
        LY,
        flow_params(),
        Scheme::TwoCopy,
        &BoundarySpec::periodic(),
    )
    .unwrap()
}

/// A periodic D2Q5 scalar lattice `LX × ly`.
fn scalar(ly: usize) -> Result<Lattice<D2Q5AdvectionDiffusion, Soa, f64>, lbm::LbmError> {
    let p = lbm::models::D2Q5AdvectionDiffusionParams {
        tau: 0.8,
        ux: 0.0,
        uy: 0.0,
    };
    Lattice::new(LX, ly, p, Scheme::TwoCopy, &BoundarySpec::periodic())
}

/// A D2Q9 BGK lattice with the boundaries `spec`.
fn bgk(spec: &BoundarySpec) -> Result<Lattice<D2Q9Bgk, Soa, f64>, lbm::LbmError> {
    let p = lbm::models::D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    Lattice::new(LX, LY, p, Scheme::TwoCopy, spec)
}

/// Fields set per site are part of the state a checkpoint keeps: resumed as a new lattice in
/// another layout and scheme, or restored into a fresh one, the run continues bitwise as the
/// uninterrupted one, with the same fields; fields left uniform are not stored.
#[test]
fn per_site_fields_are_checkpointed_and_restored() {
    use lbm::{Solver, read_checkpoint};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scalar.lbm");
    let mut straight = scalar(LY).unwrap();
    state(&mut straight);
    let velocity = |k: f64| -> Vec<f64> {
        (0..LX * LY)
            .map(|s| 0.04 * wave(s / LY, s % LY, k))
            .collect()
    };
    straight.set_field("ux", &velocity(0.7)).unwrap();
    straight.set_field("uy", &velocity(1.1)).unwrap();
    straight.run(3, 0).unwrap();
    straight.write_checkpoint(&path).unwrap();
    straight.run(20, 0).unwrap();
    let want = populations(&straight);

    let c = read_checkpoint::<D2Q5AdvectionDiffusion, f64>(&path).unwrap();
    assert_eq!(c.header.fields, ["ux", "uy"]);
    let mut resumed = c
        .into_lattice::<CAoSoa<4>>(Scheme::InPlace, &BoundarySpec::periodic())
        .unwrap();
    for name in ["ux", "uy"] {
        assert!(
            resumed.field(name).unwrap() == straight.field(name).unwrap(),
            "{name}"
        );
    }
    resumed.run(20, 0).unwrap();
    assert!(
        populations(&resumed) == want,
        "resumed in CAoSoA<4>, in place"
    );

    let mut fresh = Lattice::<D2Q5AdvectionDiffusion, Aos, f64>::new(
        LX,
        LY,
        *straight.params(),
        Scheme::TwoCopy,
        &BoundarySpec::periodic(),
    )
    .unwrap();
    let c = read_checkpoint::<D2Q5AdvectionDiffusion, f64>(&path).unwrap();
    fresh.restore(&c, &path).unwrap();
    assert_eq!(fresh.steps_done(), 3);
    fresh.run(20, 0).unwrap();
    assert!(populations(&fresh) == want, "restored into AoS");

    // Uniform fields are the parameters: nothing per site is stored.
    let uniform = dir.path().join("uniform.lbm");
    scalar(LY).unwrap().write_checkpoint(&uniform).unwrap();
    let c = read_checkpoint::<D2Q5AdvectionDiffusion, f64>(&uniform).unwrap();
    assert!(c.header.fields.is_empty());
    let back = c
        .into_lattice::<Soa>(Scheme::TwoCopy, &BoundarySpec::periodic())
        .unwrap();
    assert!(!back.has_site_fields());
}

/// Every population of `lat`, site by site.
fn populations<M: Model, L: Layout>(lat: &Lattice<M, L, f64>) -> Vec<f64> {
    let mut f = vec![0.0; M::Q];
    let mut out = Vec::new();
    for x in 0..LX {
        for y in 0..LY {
            lat.populations(x, y, &mut f).unwrap();
            out.extend_from_slice(&f);
        }
    }
    out
}
