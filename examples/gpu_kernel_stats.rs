//! What the Vulkan driver made of the GPU backend's site kernels: registers per thread, spills
//! to local memory, shared memory and code size of each fused-step entry point
//! (`fused_wg64`, `aa_pull_wg256`, …) of the benchmark's models (D2Q37, D2Q9, D3Q19) in every
//! precision, in the SoA and CAoSoA layouts and both schemes.
//!
//! ```text
//! cargo run --release --example gpu_kernel_stats [-- ENTRY]
//! ```
//!
//! `ENTRY` keeps the entry points whose name contains it (by default the site kernels of
//! workgroups of 64 and 256). The registers per thread bound the occupancy: an SM of an
//! NVIDIA H100 holds 65,536 registers, so a kernel of 128 registers runs at most 512 threads
//! (16 warps of 64) per SM. The shader is the one a [`GpuLattice`] composes for the adapter
//! wgpu picks (`LBM_GPU_ADAPTER`), translated to SPIR-V by naga and compiled by the driver on
//! a Vulkan device of its own with the extension `VK_KHR_pipeline_executable_properties`
//! (NVIDIA's and AMD's drivers have it; Mesa's lavapipe does not, and the example then says
//! so). Change the list in `main` to read your own model's kernels.

use std::error::Error;
use std::ffi::CString;
use std::sync::Arc;

use ash::vk;
use lbm::gpu::{AdapterChoice, GpuContext, GpuLattice, GpuOptions};
use lbm::models::{D2Q9Bgk, D2Q9BgkParams, D2Q37, D2Q37Params, D3Q19Bgk, D3Q19BgkParams};
use lbm::{BoundarySpec, F16s, LayoutKind, Model, Real, Scheme, Wall};

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = Arc::new(GpuContext::new(&GpuOptions {
        adapter: AdapterChoice::from_env(),
        ..GpuOptions::default()
    })?);
    let vk = Vk::new()?;
    let thermal = BoundarySpec {
        bottom: Some(Wall::Thermal { temperature: 1.0 }),
        top: Some(Wall::Thermal { temperature: 1.0 }),
        ..BoundarySpec::default()
    };
    let d2q37 = D2Q37Params { tau: 0.8, g: 1e-5 };
    let d2q9 = D2Q9BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
    };
    let d3q19 = D3Q19BgkParams {
        tau: 0.8,
        ax: 0.0,
        ay: 0.0,
        az: 0.0,
    };
    let only: Option<String> = std::env::args().nth(1);
    for layout in [LayoutKind::Soa, LayoutKind::CAoSoa(16)] {
        for scheme in [Scheme::TwoCopy, Scheme::InPlace] {
            let size = [1024, 2048, 1];
            one::<D2Q37, F16s>(&vk, &ctx, layout, size, &d2q37, scheme, &thermal, &only);
            one::<D2Q37, f32>(&vk, &ctx, layout, size, &d2q37, scheme, &thermal, &only);
            one::<D2Q37, f64>(&vk, &ctx, layout, size, &d2q37, scheme, &thermal, &only);
            let ch = BoundarySpec::channel();
            one::<D2Q9Bgk, F16s>(&vk, &ctx, layout, [512, 512, 1], &d2q9, scheme, &ch, &only);
            one::<D2Q9Bgk, f32>(&vk, &ctx, layout, [512, 512, 1], &d2q9, scheme, &ch, &only);
            let p = BoundarySpec::periodic();
            one::<D3Q19Bgk, F16s>(&vk, &ctx, layout, [64, 64, 64], &d3q19, scheme, &p, &only);
            one::<D3Q19Bgk, f32>(&vk, &ctx, layout, [64, 64, 64], &d3q19, scheme, &p, &only);
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn one<M: Model, T: Real>(
    vk: &Vk,
    ctx: &Arc<GpuContext>,
    layout: LayoutKind,
    size: [usize; 3],
    params: &M::Params,
    scheme: Scheme,
    spec: &BoundarySpec,
    only: &Option<String>,
) {
    let what = format!(
        "{} {} {:?} {:?}",
        M::NAME,
        std::any::type_name::<T>(),
        layout,
        scheme
    );
    let lat = match GpuLattice::<M, T>::with_size(ctx, layout, size, params.clone(), scheme, spec) {
        Ok(l) => l,
        Err(e) => return println!("{what}: {e}"),
    };
    let src = lat.shader_source();
    match vk.stats(src, only) {
        Ok(lines) => {
            for l in lines {
                println!("{what} {l}");
            }
        }
        Err(e) => println!("{what}: {e}"),
    }
}

struct Vk {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    pe: ash::khr::pipeline_executable_properties::Device,
}

impl Vk {
    fn new() -> Result<Self, Box<dyn Error>> {
        // SAFETY: plain Vulkan setup; every handle lives as long as `Vk` (never destroyed:
        // the process ends after the report).
        unsafe {
            let entry = ash::Entry::load()?;
            let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
            let instance = entry.create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )?;
            let ext = ash::khr::pipeline_executable_properties::NAME;
            let mut chosen = None;
            for pd in instance.enumerate_physical_devices()? {
                let props = instance.get_physical_device_properties(pd);
                let name = props.device_name_as_c_str()?.to_string_lossy().to_string();
                let has = instance
                    .enumerate_device_extension_properties(pd)?
                    .iter()
                    .any(|e| e.extension_name_as_c_str() == Ok(ext));
                println!(
                    "vulkan device {name} ({:?}): {ext:?} {has}",
                    props.device_type
                );
                let better = props.device_type == vk::PhysicalDeviceType::DISCRETE_GPU;
                if has && (chosen.is_none() || better) {
                    chosen = Some(pd);
                }
            }
            let pd = chosen.ok_or("no device with VK_KHR_pipeline_executable_properties")?;
            let family = instance
                .get_physical_device_queue_family_properties(pd)
                .iter()
                .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
                .ok_or("no compute queue")? as u32;
            let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut fpe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
            let mut f2 = vk::PhysicalDeviceFeatures2::default()
                .push_next(&mut f11)
                .push_next(&mut f12)
                .push_next(&mut fpe);
            instance.get_physical_device_features2(pd, &mut f2);
            let prio = [1.0f32];
            let queues = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&prio)];
            let exts = [ext.as_ptr()];
            let dci = vk::DeviceCreateInfo::default()
                .push_next(&mut f2)
                .queue_create_infos(&queues)
                .enabled_extension_names(&exts);
            let device = instance.create_device(pd, &dci, None)?;
            let pe = ash::khr::pipeline_executable_properties::Device::new(&instance, &device);
            Ok(Self {
                _entry: entry,
                instance,
                device,
                pe,
            })
        }
    }

    /// The statistics of every entry point of `wgsl` whose name contains `only` (all fused
    /// steps' of one workgroup size when `None`).
    fn stats(&self, wgsl: &str, only: &Option<String>) -> Result<Vec<String>, Box<dyn Error>> {
        let module = naga::front::wgsl::parse_str(wgsl)?;
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)?;
        let spv =
            naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None)?;
        // Descriptor sets from the module's bindings.
        let mut sets: Vec<Vec<vk::DescriptorSetLayoutBinding>> = Vec::new();
        for (_, var) in module.global_variables.iter() {
            let Some(rb) = &var.binding else { continue };
            let ty = match var.space {
                naga::AddressSpace::Storage { .. } => vk::DescriptorType::STORAGE_BUFFER,
                naga::AddressSpace::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
                _ => continue,
            };
            let g = rb.group as usize;
            if sets.len() <= g {
                sets.resize(g + 1, Vec::new());
            }
            sets[g].push(
                vk::DescriptorSetLayoutBinding::default()
                    .binding(rb.binding)
                    .descriptor_type(ty)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE),
            );
        }
        let mut lines = Vec::new();
        // SAFETY: handles created here from `self.device`, used while it lives.
        unsafe {
            let d = &self.device;
            let sm =
                d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&spv), None)?;
            let layouts = sets
                .iter()
                .map(|b| {
                    d.create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default().bindings(b),
                        None,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let pl = d.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                None,
            )?;
            for ep in &module.entry_points {
                let wanted = match only {
                    Some(o) => ep.name.contains(o.as_str()),
                    None => ["fused", "aa_pull", "aa_local"]
                        .iter()
                        .any(|e| ep.name == format!("{e}_wg64") || ep.name == format!("{e}_wg256")),
                };
                if !wanted {
                    continue;
                }
                let name = CString::new(ep.name.clone())?;
                let stage = vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .module(sm)
                    .name(&name);
                let ci = vk::ComputePipelineCreateInfo::default()
                    .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR)
                    .stage(stage)
                    .layout(pl);
                let p = match d.create_compute_pipelines(vk::PipelineCache::null(), &[ci], None) {
                    Ok(p) => p[0],
                    Err((_, e)) => {
                        lines.push(format!("{}: pipeline failed {e:?}", ep.name));
                        continue;
                    }
                };
                let execs = self.pe.get_pipeline_executable_properties(
                    &vk::PipelineInfoKHR::default().pipeline(p),
                )?;
                for (i, _) in execs.iter().enumerate() {
                    let st = self.pe.get_pipeline_executable_statistics(
                        &vk::PipelineExecutableInfoKHR::default()
                            .pipeline(p)
                            .executable_index(i as u32),
                    )?;
                    let vals: Vec<String> = st
                        .iter()
                        .map(|s| {
                            let n = s.name_as_c_str().map(|c| c.to_string_lossy().to_string());
                            let v = match s.format {
                                vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                                    format!("{}", s.value.b32)
                                }
                                vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                                    format!("{}", s.value.i64)
                                }
                                vk::PipelineExecutableStatisticFormatKHR::UINT64 => {
                                    format!("{}", s.value.u64)
                                }
                                _ => format!("{}", s.value.f64),
                            };
                            format!("{}={v}", n.unwrap_or_default())
                        })
                        .collect();
                    lines.push(format!("{}: {}", ep.name, vals.join(", ")));
                }
                d.destroy_pipeline(p, None);
            }
        }
        Ok(lines)
    }
}

impl Drop for Vk {
    fn drop(&mut self) {
        // SAFETY: no handle of the device is in use any more.
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
