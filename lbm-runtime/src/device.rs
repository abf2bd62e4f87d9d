//! The device a [`crate::gpu::GpuLattice`] runs on: adapter choice, device creation with the
//! adapter's full limits (and `SHADER_F64` where offered), error capture, and the one-line
//! description printed in performance summaries.

use std::sync::{Arc, Mutex};

use crate::runtime_error::GpuError;

/// Which adapter to use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AdapterChoice {
    /// The best available: a discrete GPU before an integrated one, before a virtual one,
    /// before a CPU (software) adapter; among equals, one with f64.
    #[default]
    Best,
    /// The first adapter whose name contains this text (case-insensitive).
    Name(String),
    /// The best adapter of this type.
    Type(wgpu::DeviceType),
}

impl AdapterChoice {
    /// The choice named by the environment variable `LBM_GPU_ADAPTER` (see
    /// [`AdapterChoice::parse`]), or [`AdapterChoice::Best`] when it is unset.
    pub fn from_env() -> Self {
        std::env::var("LBM_GPU_ADAPTER").map_or(AdapterChoice::Best, |s| Self::parse(&s))
    }

    /// Parses `best`, `discrete`, `integrated`, `virtual`, `cpu`, or else a name fragment.
    pub fn parse(s: &str) -> Self {
        match s.to_ascii_lowercase().as_str() {
            "" | "best" => AdapterChoice::Best,
            "discrete" => AdapterChoice::Type(wgpu::DeviceType::DiscreteGpu),
            "integrated" => AdapterChoice::Type(wgpu::DeviceType::IntegratedGpu),
            "virtual" => AdapterChoice::Type(wgpu::DeviceType::VirtualGpu),
            "cpu" => AdapterChoice::Type(wgpu::DeviceType::Cpu),
            _ => AdapterChoice::Name(s.to_string()),
        }
    }
}

/// Options of [`GpuContext::new`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GpuOptions {
    /// The adapter to use.
    pub adapter: AdapterChoice,
    /// A cap on the bytes of one storage binding, below the device's
    /// `max_storage_buffer_binding_size` (tests use it to force the split of the populations
    /// across bindings).
    pub max_binding_bytes: Option<u64>,
    /// A cap on the workgroups per dispatch dimension, below the device's
    /// `max_compute_workgroups_per_dimension` (tests use it to force the 2-D dispatch grid).
    pub max_workgroups_per_dim: Option<u32>,
    /// Do not enable `SHADER_F64` even where the adapter offers it (f32-only runs, and tests
    /// of the error an f64 lattice gets on an adapter without it).
    pub without_f64: bool,
    /// Do not enable `SHADER_F16` even where the adapter offers it (f16s lattices then pack
    /// their binary16 elements in `u32` words: tests of that path on adapters with `f16`).
    pub without_f16: bool,
    /// This process's rank among the processes of its node (0 when alone; MPI ranks take it
    /// from a shared-memory split, `crate::mpi_ring::node_rank`). With
    /// [`AdapterChoice::Best`] or a device type, the processes of a node take the equally good
    /// adapters in turn, so ranks on a node with several GPUs run on different ones; an
    /// adapter chosen by name is the one every rank takes.
    pub node_rank: usize,
    /// Keep the shaders' runtime bounds checks even where [`crate::gpu::bounds`] proves every index
    /// in range (to measure what they cost, or to look for a fault in a new model's shader).
    pub bounds_checks: bool,
}

/// An opened device and its queue.
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    f64: bool,
    f16: bool,
    binding_limit: u64,
    workgroup_limit: u32,
    bounds_checks: bool,
    errors: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Rank of a device type for [`AdapterChoice::Best`] (lower is better).
fn type_rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

fn describe_info(info: &wgpu::AdapterInfo) -> String {
    format!(
        "{} ({:?}, {:?}, driver {} {})",
        info.name, info.device_type, info.backend, info.driver, info.driver_info
    )
}

impl GpuContext {
    /// Opens the adapter chosen by `opts` (blocking).
    pub fn new(opts: &GpuOptions) -> Result<Self, GpuError> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let backends = wgpu::Backends::all();
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        if adapters.is_empty() {
            return Err(GpuError::NoAdapter {
                backends: format!("{backends:?}"),
            });
        }
        let adapter = choose(adapters, &opts.adapter, opts.node_rank)?;
        Self::open(adapter, opts)
    }

    /// Descriptions of every adapter present.
    pub fn list_adapters() -> Vec<String> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
            .iter()
            .map(|a| describe_info(&a.get_info()))
            .collect()
    }

    fn open(adapter: wgpu::Adapter, opts: &GpuOptions) -> Result<Self, GpuError> {
        let info = adapter.get_info();
        let f64 = adapter.features().contains(wgpu::Features::SHADER_F64) && !opts.without_f64;
        let f16 = adapter.features().contains(wgpu::Features::SHADER_F16) && !opts.without_f16;
        let limits = adapter.limits();
        let mut required_features = wgpu::Features::empty();
        required_features.set(wgpu::Features::SHADER_F64, f64);
        required_features.set(wgpu::Features::SHADER_F16, f16);
        let desc = wgpu::DeviceDescriptor {
            label: Some("lbm"),
            required_features,
            required_limits: limits.clone(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| GpuError::Device(format!("{}: {e}", info.name)))?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.to_string());
            }
        }));
        let device_cap = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let binding_limit = opts
            .max_binding_bytes
            .map_or(device_cap, |b| b.min(device_cap));
        let wg_cap = limits.max_compute_workgroups_per_dimension;
        let workgroup_limit = opts
            .max_workgroups_per_dim
            .map_or(wg_cap, |w| w.clamp(1, wg_cap));
        Ok(Self {
            device,
            queue,
            info,
            limits,
            f64,
            f16,
            binding_limit,
            workgroup_limit,
            bounds_checks: opts.bounds_checks,
            errors,
        })
    }

    /// `name (type, backend, driver …)`, for performance summaries.
    pub fn describe(&self) -> String {
        describe_info(&self.info)
    }

    /// The adapter's information.
    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// The device's limits (the adapter's, all requested).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// Whether shaders keep their runtime bounds checks even where proven in range
    /// ([`GpuOptions::bounds_checks`]).
    pub fn keeps_bounds_checks(&self) -> bool {
        self.bounds_checks
    }

    /// Whether shaders can store binary16 as `f16` (`SHADER_F16`); without it f16s lattices
    /// pack two binary16 elements per `u32` word.
    pub fn supports_f16(&self) -> bool {
        self.f16
    }

    /// Whether f64 shaders can run (`SHADER_F64`).
    pub fn supports_f64(&self) -> bool {
        self.f64
    }

    /// Whether the adapter is a CPU (software rasteriser such as lavapipe): its timings are
    /// not GPU figures.
    pub fn is_cpu(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// Bytes one storage binding may hold (the device's limit, or the cap of
    /// [`GpuOptions::max_binding_bytes`]).
    pub fn binding_limit(&self) -> u64 {
        self.binding_limit
    }

    /// Workgroups one dispatch dimension may hold (the device's limit, or the cap of
    /// [`GpuOptions::max_workgroups_per_dim`]).
    pub fn workgroup_limit(&self) -> u32 {
        self.workgroup_limit
    }

    /// Returns the device errors captured since the last call as one error.
    pub(crate) fn take_error(&self) -> Result<(), GpuError> {
        let mut v = self
            .errors
            .lock()
            .map_err(|e| GpuError::Device(e.to_string()))?;
        if v.is_empty() {
            return Ok(());
        }
        let msg = v.join("\n");
        v.clear();
        Err(GpuError::Device(msg))
    }

    /// Waits for all submitted work without taking the errors captured so far (they stay for
    /// the next [`GpuContext::wait`]); `false` if the device could not be polled.
    pub(crate) fn drain(&self) -> bool {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .is_ok()
    }

    /// Maps `buf` for reading after the submitted work, and returns its contents.
    pub(crate) fn map_read<P: bytemuck::Pod>(
        &self,
        buf: &wgpu::Buffer,
    ) -> Result<Vec<P>, GpuError> {
        self.map_read_with(buf, <[P]>::to_vec)
    }

    /// What `read` makes of the values of `buf` (a staging buffer with `MAP_READ`), mapped
    /// after the submitted work, without copying them first where they lie aligned for `P`.
    pub(crate) fn map_read_with<P: bytemuck::Pod, R>(
        &self,
        buf: &wgpu::Buffer,
        read: impl FnOnce(&[P]) -> R,
    ) -> Result<R, GpuError> {
        let (tx, rx) = std::sync::mpsc::channel();
        buf.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        rx.recv()
            .map_err(|e| GpuError::Device(format!("buffer mapping was dropped: {e}")))?
            .map_err(|e| GpuError::Device(format!("buffer mapping failed: {e}")))?;
        let view = buf
            .get_mapped_range(..)
            .map_err(|e| GpuError::Device(format!("mapped range: {e}")))?;
        // Copied where the mapping is not aligned for `P` or ends within a value (a range
        // rounded up to 4 bytes: the last value then padded with zeros).
        let r = match bytemuck::try_cast_slice(&view[..]) {
            Ok(values) => read(values),
            Err(_) => read(&bytemuck::pod_collect_to_vec(&view[..])),
        };
        drop(view);
        buf.unmap();
        Ok(r)
    }

    /// A buffer of `bytes` bytes to copy into and map for reading.
    pub(crate) fn staging(&self, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("staging"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// The first `bytes` bytes of the storage buffer `buf` (created with `COPY_SRC`), after
    /// the submitted work, read through a staging buffer.
    pub(crate) fn read_buffer<P: bytemuck::Pod>(
        &self,
        buf: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<P>, GpuError> {
        let staging = self.staging(bytes);
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buf, 0, &staging, 0, bytes);
        self.queue.submit([enc.finish()]);
        self.map_read(&staging)
    }

    /// Waits for all submitted work.
    pub(crate) fn wait(&self) -> Result<(), GpuError> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Device(e.to_string()))?;
        self.take_error()
    }
}

/// Picks the adapter `choice` asks for among `adapters`: the best match, or for a choice by
/// rank or type the `node_rank`-th of the equally good ones in turn ([`in_turn`]).
fn choose(
    adapters: Vec<wgpu::Adapter>,
    choice: &AdapterChoice,
    node_rank: usize,
) -> Result<wgpu::Adapter, GpuError> {
    let available = adapters
        .iter()
        .map(|a| describe_info(&a.get_info()))
        .collect::<Vec<_>>()
        .join("; ");
    let key = |a: &wgpu::Adapter| {
        let f64 = a.features().contains(wgpu::Features::SHADER_F64);
        (type_rank(a.get_info().device_type), !f64)
    };
    let mut matching: Vec<wgpu::Adapter> = adapters
        .into_iter()
        .filter(|a| match choice {
            AdapterChoice::Best => true,
            AdapterChoice::Name(n) => a.get_info().name.to_lowercase().contains(&n.to_lowercase()),
            AdapterChoice::Type(t) => a.get_info().device_type == *t,
        })
        .collect();
    matching.sort_by_key(key);
    let keys: Vec<_> = matching.iter().map(key).collect();
    let turn = match choice {
        AdapterChoice::Name(_) => 0,
        _ => in_turn(&keys, node_rank),
    };
    matching
        .into_iter()
        .nth(turn)
        .ok_or_else(|| GpuError::AdapterNotFound {
            wanted: format!("{choice:?}"),
            available,
        })
}

/// The index that process `node_rank` of a node takes among adapters sorted best first by
/// `keys`: the best ones (equal keys) in turn, `node_rank mod count`.
fn in_turn<K: PartialEq>(keys: &[K], node_rank: usize) -> usize {
    let best = keys.iter().take_while(|k| Some(*k) == keys.first()).count();
    node_rank % best.max(1)
}

#[cfg(test)]
#[path = "device_tests.rs"]
mod tests;
