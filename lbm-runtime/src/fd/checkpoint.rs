//! Checkpoints of finite-difference runs, in the format of every run ([`crate::checkpoint`]):
//! a shard per block, each holding its box of nodes with the unknowns of each node together
//! (values of the run's precision), and a manifest that says what the run is (scheme, nodes,
//! precision, parameters, steps, and in [`FdFacts`] the spacing, sides, unknowns and time).
//!
//! Every block writes its shard; the first process then writes the manifest, so a crash
//! leaves the previous checkpoint or the new one. Every block of the run that resumes reads
//! its own box from the shards that hold it, so a checkpoint of one cut resumes on any other
//! cut, process count and backend. The walls' nodes and the ghost layers are not stored: the
//! sides set them from the nodes inside, so a resumed run computes the very operations of an
//! uninterrupted one (the results are bitwise the same).

use std::ops::Range;
use std::path::Path;

use super::FdError;
use crate::blocks::Blocks;
use crate::checkpoint::{
    mismatch, new_run, open, publish, run_name, shard_name, write_shard_parts, CheckpointError,
    CheckpointHeader, ShardHeader,
};
use crate::group::{agree, Transfers};
use crate::Real;

/// Why the checkpoint `there` cannot resume the run `here` describes (the manifest of a
/// finite-difference run, its shards aside), or `None` when it can.
fn differs(there: &CheckpointHeader, here: &CheckpointHeader) -> Option<String> {
    let Some(facts) = &there.fd else {
        return Some(format!(
            "it is a checkpoint of a lattice (the model {}), not of a finite-difference run",
            there.model
        ));
    };
    let ours = here.fd.as_ref().expect("a finite-difference run's facts");
    if there.model != here.model {
        return Some(format!(
            "it is of the scheme {}, this run's is {}",
            there.model, here.model
        ));
    }
    if there.size() != here.size() || facts.h != ours.h {
        return Some(format!(
            "its grid is {:?} nodes of spacing {}, this run's {:?} of spacing {}",
            there.size(),
            facts.h,
            here.size(),
            ours.h
        ));
    }
    if there.precision != here.precision {
        return Some(format!(
            "it was computed in {}, this run computes in {}: resume in {}",
            there.precision, here.precision, there.precision
        ));
    }
    for (then, now) in there.params.iter().zip(&here.params) {
        if then != now {
            return Some(format!(
                "its parameter {} is {}, this run's {} is {}",
                then.name, then.value, now.name, now.value
            ));
        }
    }
    if there.params.len() != here.params.len()
        || facts.unknowns != ours.unknowns
        || there.q != here.q
        || !there.fields.is_empty()
    {
        return Some("its parameters or unknowns are not the scheme's".into());
    }
    if facts.sides != ours.sides {
        return Some(format!(
            "its sides are [{}], this run's [{}]",
            facts.sides.join(", "),
            ours.sides.join(", ")
        ));
    }
    None
}

/// Writes the checkpoint `path` of the run `manifest` describes (its run and shards set
/// here), cut into `blocks` among `group`: this process's block's `values`, in the payload's
/// order, as its shard; then, on the first process, the manifest. Its outcome is every
/// process's (collective).
pub(crate) fn write<T: Real>(
    group: &dyn Transfers<T>,
    path: &Path,
    mut manifest: CheckpointHeader,
    (blocks, values): (&Blocks, &[T]),
) -> Result<(), FdError> {
    // The first process's token, on every one.
    manifest.run = run_name(group.each(new_run())[0]);
    let (rank, ranks) = (group.rank(), group.ranks());
    let shard = write_shard_parts(
        path,
        (rank, ranks),
        ShardHeader::of(&manifest, blocks.block(rank)),
        &[bytemuck::cast_slice(values)],
    );
    let mine = match shard {
        Ok(shard) => {
            agree::<_, FdError>(group, Ok(()))?;
            shard
        }
        Err(e) => return Err(agree::<(), FdError>(group, Err(e.into())).unwrap_err()),
    };
    let crcs = group.each(u64::from(mine.crc32));
    let sizes = group.each(mine.payload_bytes);
    let written = match group.is_root() {
        true => {
            manifest.shards = (0..ranks)
                .map(|r| {
                    let mut s = ShardHeader::of(&manifest, blocks.block(r));
                    s.payload_bytes = sizes[r];
                    s.crc32 = u32::try_from(crcs[r]).expect("a CRC-32 fits in 32 bits");
                    s.entry(shard_name(path, &manifest.run, r, ranks))
                })
                .collect();
            publish(path, &manifest).map_err(FdError::from)
        }
        false => Ok(()),
    };
    agree(group, written)
}

/// Reads the checkpoint `path` for the run `here` describes: its manifest, and the values at
/// the nodes of `block` in the payload's order. Refuses a checkpoint that is not whole, and
/// one of another run (scheme, grid, spacing, precision, parameters, sides), before reading
/// any values.
pub(crate) fn read<T: Real>(
    path: &Path,
    here: &CheckpointHeader,
    block: [Range<usize>; 3],
) -> Result<(CheckpointHeader, Vec<T>), CheckpointError> {
    let (there, shards) = open(path, std::mem::size_of::<T>(), |there| {
        differs(there, here).map_or(Ok(()), |why| Err(mismatch(path, why)))
    })?;
    let nodes: usize = block.iter().map(Range::len).product();
    let mut values = vec![T::default(); nodes * there.q];
    shards.read_box(
        &there,
        (block, std::mem::size_of::<T>()),
        bytemuck::cast_slice_mut(&mut values),
        &mut [],
    )?;
    Ok((there, values))
}
