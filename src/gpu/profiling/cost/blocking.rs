//! The engine's one wait on the device ([`GpuCounters::wait`]), counted. No frame path calls it: the
//! pipelined frame (`encode_frame`, `poll_reports`) never waits.

use super::GpuCounters;
use std::sync::atomic::Ordering::Relaxed;

impl GpuCounters {
    /// Blocks until the device has finished the work submitted so far (`device.poll` with a wait),
    /// counted in [`super::GpuCost::waits`]. Every wait of the engine goes through here.
    pub fn wait(&self, device: &wgpu::Device) -> crate::error::Result<()> {
        self.waits.fetch_add(1, Relaxed);
        #[cfg(target_arch = "wasm32")]
        {
            // a browser page cannot block: the map callbacks run only when control returns to its
            // event loop. One line, where waiting would hang the page.
            let _ = device;
            Err(crate::error::Error::Gpu(
                "this call waits on the GPU, which a browser page cannot do: use the pipelined frame (encode_frame, poll_reports)".into(),
            ))
        }
        #[cfg(not(target_arch = "wasm32"))]
        device.poll(wgpu::PollType::wait_indefinitely()).map(|_| ()).map_err(|e| crate::error::Error::Gpu(e.to_string()))
    }
}
