//! The adapter and device: choosing one, creating it without panics, and the buffer
//! helpers every kernel call uses (upload, scratch, read back), each wrapped in wgpu
//! error scopes so a device failure is an `Error`, not a panic.

use std::sync::Arc;

use fhe_api::{BackendKind, DeviceInfo, Error, Probe, Result, Unavailable};
use wgpu::util::DeviceExt;

/// Everything the backend needs from wgpu, created once.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
}

fn device_error(detail: impl Into<String>) -> Error {
    Error::Device { backend: BackendKind::Wgpu, detail: detail.into() }
}

/// The Vulkan loader variables that decide which drivers are seen, for error messages.
fn driver_env() -> String {
    let vars: Vec<String> = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}")))
        .collect();
    if vars.is_empty() {
        String::new()
    } else {
        format!(" ({})", vars.join(", "))
    }
}

/// Adapters this build can see, hardware first.
fn adapters() -> Result<Vec<wgpu::Adapter>, Unavailable> {
    let found = std::panic::catch_unwind(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = BACKENDS;
        // Buffer creation past this share of the driver's memory budget (Vulkan with
        // VK_EXT_memory_budget, DX12) is an out-of-memory error we map, instead of a
        // device lost to memory pressure.
        desc.memory_budget_thresholds = wgpu::MemoryBudgetThresholds {
            for_resource_creation: Some(RESOURCE_BUDGET_PERCENT),
            for_device_loss: None,
        };
        let instance = wgpu::Instance::new(desc);
        pollster::block_on(instance.enumerate_adapters(BACKENDS))
    })
    .map_err(|_| Unavailable::DriverMissing {
        library: "Vulkan/Metal/DX12 (through wgpu)".into(),
        detail: "wgpu panicked while enumerating adapters".into(),
    })?;
    let mut found: Vec<wgpu::Adapter> = found;
    if found.is_empty() {
        return Err(Unavailable::NoDevice {
            detail: format!(
                "wgpu found no Vulkan, Metal or DX12 adapter{}; on Linux install a Vulkan driver \
                 (for software Vulkan: mesa-vulkan-drivers and libvulkan1)",
                driver_env()
            ),
        });
    }
    // Hardware before software, stable otherwise.
    found.sort_by_key(|a| a.get_info().device_type == wgpu::DeviceType::Cpu);
    Ok(found)
}

/// The share of the memory budget new buffers may take (`adapters`).
const RESOURCE_BUDGET_PERCENT: u8 = 95;

/// The native backends with compute: Vulkan (Linux, Windows, lavapipe), Metal, DX12.
const BACKENDS: wgpu::Backends = wgpu::Backends::VULKAN.union(wgpu::Backends::METAL).union(wgpu::Backends::DX12);

/// Adapters with `SHADER_INT64`, or why there are none.
fn usable_adapters() -> Result<Vec<wgpu::Adapter>, Unavailable> {
    let all = adapters()?;
    let names: Vec<String> = all.iter().map(|a| a.get_info().name).collect();
    let usable: Vec<wgpu::Adapter> =
        all.into_iter().filter(|a| a.features().contains(wgpu::Features::SHADER_INT64)).collect();
    if usable.is_empty() {
        return Err(Unavailable::Unsupported {
            detail: format!(
                "no adapter offers 64-bit shader integers (SHADER_INT64), which every fhe-wgpu kernel needs; \
                 adapters seen: {}",
                names.join(", ")
            ),
        });
    }
    Ok(usable)
}

/// The registry probe: hardware when a non-CPU adapter with 64-bit integers answers,
/// software when only a CPU one (lavapipe) does.
pub fn probe() -> Probe {
    match usable_adapters() {
        Ok(list) => {
            if list.iter().any(|a| a.get_info().device_type != wgpu::DeviceType::Cpu) {
                Probe::Hardware
            } else {
                Probe::Software
            }
        }
        Err(cause) => Probe::Unavailable(cause),
    }
}

impl Gpu {
    /// Opens adapter number `ordinal` (hardware adapters first) with its own limits.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let unavailable = |cause| Error::Unavailable { backend: BackendKind::Wgpu, cause };
        let list = usable_adapters().map_err(unavailable)?;
        let count = list.len();
        let adapter = list.into_iter().nth(ordinal).ok_or_else(|| {
            unavailable(Unavailable::NoDevice {
                detail: format!("LUX_FHE_DEVICE={ordinal}, but only {count} usable wgpu adapter(s) answer"),
            })
        })?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let desc = wgpu::DeviceDescriptor {
            label: Some("fhe-wgpu"),
            required_features: wgpu::Features::SHADER_INT64,
            required_limits: limits.clone(),
            ..Default::default()
        };
        // The adapter is not used again if this panics, so unwind safety holds.
        let request = std::panic::AssertUnwindSafe(|| pollster::block_on(adapter.request_device(&desc)));
        let (device, queue) = std::panic::catch_unwind(request)
            .map_err(|_| device_error(format!("wgpu panicked creating a device on {}", info.name)))?
            .map_err(|e| device_error(format!("cannot create a device on {}: {e}", info.name)))?;
        // Errors outside a scope are logged, never a panic (wgpu's default handler panics).
        device.on_uncaptured_error(Arc::new(|e| tracing::error!(error = %e, "wgpu uncaptured error")));
        tracing::info!(adapter = %info.name, driver = %info.driver, kind = ?info.device_type, "wgpu device opened");
        Ok(Gpu { device, queue, info, limits })
    }

    pub fn device_info(&self) -> DeviceInfo {
        let driver = [self.info.driver.as_str(), self.info.driver_info.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        DeviceInfo {
            name: self.info.name.clone(),
            driver: (!driver.is_empty()).then_some(driver),
            software: self.info.device_type == wgpu::DeviceType::Cpu,
        }
    }

    /// Runs `f` inside validation and out-of-memory error scopes; a captured error
    /// becomes `Error::Device` naming `what`, or `Error::OutOfMemory` ([`oom_error`]).
    pub fn scoped<T>(&self, what: &str, f: impl FnOnce() -> T) -> Result<T> {
        self.scoped_sized(what, 0, f)
    }

    /// [`Gpu::scoped`] for `f` that allocates `bytes`: the need an out-of-memory error
    /// names.
    pub fn scoped_sized<T>(&self, what: &str, bytes: u64, f: impl FnOnce() -> T) -> Result<T> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        match (v, o) {
            (Some(e), _) => Err(device_error(format!("{what}: {e}"))),
            (None, Some(e)) => Err(oom_error(&format!("{what} on {}", self.info.name), bytes, &e)),
            (None, None) => Ok(out),
        }
    }

    /// The largest storage binding, which decides how keys are chunked.
    pub fn max_binding(&self) -> u64 {
        self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size)
    }

    /// Checks a buffer of `bytes` fits one storage binding.
    pub fn check_binding(&self, what: &str, bytes: u64) -> Result<()> {
        if bytes > self.max_binding() {
            return Err(Error::InvalidInput(format!(
                "{what} needs a {bytes}-byte storage binding; adapter {} allows {}",
                self.info.name,
                self.max_binding()
            )));
        }
        Ok(())
    }

    pub fn upload(&self, label: &str, bytes: &[u8], extra: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        self.check_binding(label, bytes.len() as u64)?;
        self.scoped_sized(label, bytes.len() as u64, || {
            self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE | extra,
            })
        })
    }

    pub fn uniform(&self, label: &str, words: &[u32; 4]) -> Result<wgpu::Buffer> {
        self.scoped(label, || {
            self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(words),
                usage: wgpu::BufferUsages::UNIFORM,
            })
        })
    }

    /// A zeroed read-write storage buffer that can be copied out.
    pub fn scratch(&self, label: &str, bytes: u64) -> Result<wgpu::Buffer> {
        self.check_binding(label, bytes)?;
        self.scoped_sized(label, bytes, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes.max(4),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// Submits `encoder`, then copies `src` back to the host and waits.
    pub fn submit_and_read(&self, mut encoder: wgpu::CommandEncoder, src: &wgpu::Buffer) -> Result<Vec<u8>> {
        let size = src.size();
        let staging = self.scoped_sized("read-back buffer", size, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("read-back"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        self.scoped("submission", || {
            encoder.copy_buffer_to_buffer(src, 0, &staging, 0, size);
            self.queue.submit([encoder.finish()]);
        })?;
        let (tx, rx) = std::sync::mpsc::channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| device_error(format!("waiting for the device: {e}")))?;
        rx.recv()
            .map_err(|_| device_error("read-back callback never ran"))?
            .map_err(|e| device_error(format!("mapping the read-back buffer: {e}")))?;
        let bytes = {
            let view = staging.slice(..).get_mapped_range().map_err(|e| device_error(format!("mapped range: {e}")))?;
            view.to_vec()
        };
        staging.unmap();
        Ok(bytes)
    }

    pub fn encoder(&self) -> wgpu::CommandEncoder {
        self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("fhe-wgpu") })
    }
}

/// A captured out-of-memory error as `Error::OutOfMemory` naming `what` and the `bytes`
/// asked for (0 where the call allocates no buffer of its own, a submission). wgpu has
/// no free-memory query, so `available` is 0, the driver's answer for this request; the
/// message says so.
pub fn oom_error(what: &str, bytes: u64, e: &wgpu::Error) -> Error {
    tracing::warn!(what, bytes, error = %e, "wgpu out of memory");
    Error::OutOfMemory {
        what: format!("{what} (the driver refused it: {e}; wgpu reports no free-memory figure)"),
        needed: bytes,
        available: 0,
    }
}

/// Storage (read-only or read-write) or uniform layout entries, in binding order.
pub fn layout_entries(kinds: &[Binding]) -> Vec<wgpu::BindGroupLayoutEntry> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, k)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: match k {
                Binding::Read => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: true },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Binding::ReadWrite => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Binding::Uniform => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
            },
            count: None,
        })
        .collect()
}

#[derive(Clone, Copy)]
pub enum Binding {
    Read,
    ReadWrite,
    Uniform,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// wgpu's out-of-memory error is `Error::OutOfMemory` naming the request and its
    /// bytes, not `Error::Device` (no adapter needed).
    #[test]
    fn out_of_memory_names_the_request_and_its_bytes() {
        let source: wgpu::ErrorSource = "vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY".into();
        let e = oom_error("ckks switching key on llvmpipe", 3 << 30, &wgpu::Error::OutOfMemory { source });
        let Error::OutOfMemory { what, needed, available } = &e else { panic!("not OutOfMemory: {e}") };
        assert_eq!((*needed, *available), (3 << 30, 0));
        assert!(what.starts_with("ckks switching key on llvmpipe") && what.contains("no free-memory figure"), "{e}");
        assert!(e.to_string().contains(&(3u64 << 30).to_string()), "{e}");
    }
}
