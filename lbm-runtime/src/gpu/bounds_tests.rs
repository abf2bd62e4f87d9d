use super::*;
use crate::boundary::{Boundaries, BoundarySpec, Wall};
use crate::layout::{Dims, Layout};
use crate::testing::{TestD2Q9, TestParams};
use crate::{Aos, CAoSoa, CSoa, Scheme, Soa};

type M = TestD2Q9;

/// A 12 × 32 lattice of `L` with walls `walls`, its populations in bindings of 1000.
fn case<L: Layout>(
    scheme: Scheme,
    walls: &BoundarySpec,
) -> (ShaderSpec, AffineLayout, BcTables<f64>, Bound) {
    let d = Dims::of::<M>([12, 32, 1]);
    let params = TestParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let bcs = Boundaries::<f64>::compile::<M, L>(walls, &d).unwrap();
    let tables = bc::pack::<M, f64>(&d, &bcs, &params);
    let chunk = 1000;
    let spec = ShaderSpec {
        dims: d,
        params: bc::param_count::<M>(&params),
        chunk,
        chunks: (d.len() as u64).div_ceil(chunk) as usize,
        row: 64,
        bc: tables.shape,
        scheme,
        fields: None,
        slab: false,
        packed_f16: false,
        held_at: 4 * d.plane() * <M as Model>::MOMENT_NAMES.len(),
    };
    let lens = Bound {
        chunk,
        copy: d.len() as u64,
        mout: spec.held_at as u64,
        mout_cols: 4,
        held: tables.held as u64,
    };
    (spec, AffineLayout::probe::<L>(&d).unwrap(), tables, lens)
}

fn walls() -> Vec<BoundarySpec> {
    let inlet = BoundarySpec {
        left: Some(Wall::ZouHeVelocity {
            velocity: [0.05, 0.0, 0.0],
        }),
        right: Some(Wall::ZouHePressure { density: 1.0 }),
        ..BoundarySpec::channel()
    };
    vec![
        BoundarySpec::periodic(),
        BoundarySpec::channel(),
        BoundarySpec::cavity(0.1),
        inlet,
    ]
}

fn holds<L: Layout>() {
    for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
        for w in walls() {
            let (spec, lay, tables, lens) = case::<L>(scheme, &w);
            assert_eq!(
                prove::<M, f64>(&spec, &lay, &tables, &lens),
                Ok(()),
                "{} {scheme:?} {w:?}",
                L::NAME
            );
        }
    }
}

#[test]
fn every_layout_is_proven_in_range() {
    holds::<Aos>();
    holds::<Soa>();
    holds::<CSoa<4>>();
    holds::<CSoa<8>>();
    holds::<CAoSoa<4>>();
    holds::<CAoSoa<8>>();
}

/// Each kind of corruption is caught, with what it overruns.
#[test]
fn an_index_out_of_range_is_caught() {
    let cavity = BoundarySpec::cavity(0.1);
    let fails = |edit: &dyn Fn(&mut ShaderSpec, &mut BcTables<f64>, &mut Bound)| {
        let (mut spec, lay, mut tables, mut lens) = case::<CAoSoa<4>>(Scheme::InPlace, &cavity);
        edit(&mut spec, &mut tables, &mut lens);
        prove::<M, f64>(&spec, &lay, &tables, &lens).unwrap_err()
    };
    let recs = bc::bit_words(&Dims::of::<M>([12, 32, 1])) + 12 + 1;
    // The lid's records carry wall corrections: move one past the end of consts.
    let e = fails(&|_, t, _| {
        let r = (0..t.shape.sites)
            .find(|r| t.tables[recs + r * REC + Field::Corr.at()] != NONE)
            .unwrap();
        t.tables[recs + r * REC + Field::Corr.at()] = t.consts.len() as u32 - 2;
    });
    assert!(e.contains("wall correction"), "{e}");
    let e = fails(&|_, t, _| t.tables[recs + Field::Y.at()] = 32);
    assert!(e.contains("row 32"), "{e}");
    let e = fails(&|_, t, _| t.tables[recs - 1] += 1);
    assert!(e.contains("line starts"), "{e}");
    let e = fails(&|s, _, _| s.chunks -= 1);
    assert!(e.contains("do not cover"), "{e}");
    let e = fails(&|_, _, b| b.copy -= 1);
    assert!(e.contains("largest index"), "{e}");
    let e = fails(&|_, _, b| b.mout_cols += 1);
    assert!(e.contains("columns of moments"), "{e}");
    let e = fails(&|s, _, _| s.dims.halo = 0);
    assert!(e.contains("halo"), "{e}");
}
