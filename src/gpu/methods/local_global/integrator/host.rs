//! The `cholesky` path's frame (and any solver's, phase by phase when profiled): the global step on
//! the host, one read-back of r (and of the held contacts) and one upload of δ per iteration.

use super::*;

impl LocalGlobalIntegrator {
    /// `steps` steps by several submits: the `cholesky` path (Liu et al. 2013 §4 with the global step on
    /// the host: per iteration one read-back of r, n `vec4`, and one upload of δ, n `vec4`, into the PCG's
    /// solution vector, which `local_global_advance` adds), or any solver phase by phase when `profile` (each phase
    /// its own submit, timed). Blocks until the steps are done; the state ends in state\[0\]. The split is
    /// kept for [`LocalGlobalIntegrator::last_split`] and returned.
    #[allow(clippy::too_many_arguments)]
    pub fn host_frame(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        (st, m): (&GpuState, &CpuModel),
        (end, wind): (StepEnd, Option<&crate::gpu::step_end::wind::Wind>),
        settings: &StepSettings,
        steps: usize,
        profile: bool,
    ) -> Result<LocalGlobalSplit> {
        let mut rt = self.runtime.take().ok_or_else(|| Error::internal_solver("local/global solver not prepared"))?;
        if rt.global == GlobalSolve::Cholesky && st.n > 0 && self.residual_staging.is_none() {
            let mut alloc = Allocator::new(device);
            let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
            // with contacts held, their first n vec4 (n̂, state) follow r
            let vectors = if self.held { 2 } else { 1 };
            match alloc.buffer("springsim.local_global_residual_staging", (vectors * st.n * 16) as u64, usage) {
                Ok(buffer) => self.residual_staging = Some(buffer),
                Err(e) => {
                    self.runtime = Some(rt);
                    return Err(e);
                }
            }
        }
        let result = self.host_frame_with(&mut rt, device, queue, (st, m), (end, wind), settings, steps, profile);
        if let Ok(split) = &result {
            rt.split = *split;
        }
        self.runtime = Some(rt);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn host_frame_with(
        &self,
        rt: &mut LocalGlobalRuntime,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        (st, m): (&GpuState, &CpuModel),
        (end, wind): (StepEnd, Option<&crate::gpu::step_end::wind::Wind>),
        settings: &StepSettings,
        steps: usize,
        profile: bool,
    ) -> Result<LocalGlobalSplit> {
        let new_encoder = || device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("springsim.local_global_frame") });
        let wait = || st.counters.wait(device);
        let t_frame = web_time::Instant::now();
        let n = st.n;
        let vector_bytes = (n * 16) as u64;
        let mut split = LocalGlobalSplit { frames: 1, ..Default::default() };
        let ops = local_global_ops(rt.global, settings.local_global_iterations, settings.global_iterations);
        // r travels through a staging buffer of its own (the state's is small)
        let staging = self.residual_staging.as_ref().filter(|_| rt.global == GlobalSolve::Cholesky);
        let mut enc = new_encoder();
        self.begin_frame(&mut enc);
        let mut p = 0usize;
        let mut r = vec![V3::zeros(); n];
        let mut delta = vec![V3::zeros(); n];
        let mut upload = vec![[0f32; 4]; n];
        let mut contacts = if self.held { vec![Contact::NONE; n] } else { Vec::new() };
        let mut cg = CgWork::default();
        let params = LocalGlobalParams::new(m, rt.h);
        let read_bytes = if self.held { 2 * vector_bytes } else { vector_bytes };
        st.counters.steps(steps);
        for step in 0..steps {
            let mut advances = 0;
            if let Some(w) = wind {
                // the wind's impulse into the other buffer; the step runs from there
                let mut pass = st.counters.begin_pass(&mut enc, "springsim.wind", None);
                w.encode(&mut CountedPass::new(&mut pass, &st.counters), p, n);
                drop(pass);
                p ^= 1;
            }
            for op in &ops {
                match *op {
                    LocalGlobalOp::Gpu(phase) => {
                        self.record_phase(&mut enc, rt, phase, p, st);
                        if let (LocalGlobalPhase::Advance, Some(c)) = (phase, end.colliders) {
                            advances += 1;
                            if advances < settings.local_global_iterations && c.counts.0 > 0 {
                                let mut pass = st.counters.begin_pass(&mut enc, "springsim.collide", None);
                                c.encode_positions(&mut CountedPass::new(&mut pass, &st.counters), 1 - p, n, step, self.contacts_group()?);
                            }
                        }
                        if profile {
                            let t = web_time::Instant::now();
                            st.counters.submit(queue, std::mem::replace(&mut enc, new_encoder()).finish());
                            wait()?;
                            *split.bucket(phase) += t.elapsed().as_secs_f64() * 1e3;
                        }
                    }
                    LocalGlobalOp::HostSolve => {
                        let t = web_time::Instant::now();
                        if let Some(staging) = staging {
                            // r is the first vector of the PCG's (r, z, p0, p1, Ap, x, P⁻¹)
                            enc.copy_buffer_to_buffer(&self.buffers.pcg.vectors, 0, staging, 0, vector_bytes);
                            if self.held {
                                enc.copy_buffer_to_buffer(&self.buffers.contacts, 0, staging, vector_bytes, vector_bytes);
                            }
                        }
                        st.counters.submit(queue, std::mem::replace(&mut enc, new_encoder()).finish());
                        wait()?;
                        split.global_ms += t.elapsed().as_secs_f64() * 1e3;
                        let Some(staging) = staging else { continue };
                        let t = web_time::Instant::now();
                        let bytes = read_buffer(device, &st.counters, staging, read_bytes)?;
                        split.readback_ms += t.elapsed().as_secs_f64() * 1e3;
                        let t = web_time::Instant::now();
                        let v4: &[[f32; 4]] = bytemuck::cast_slice(&bytes);
                        for (ri, a) in r.iter_mut().zip(v4) {
                            *ri = V3::new(a[0] as f64, a[1] as f64, a[2] as f64);
                        }
                        for (c, a) in contacts.iter_mut().zip(&v4[n.min(v4.len())..]) {
                            *c = Contact { normal: V3::new(a[0] as f64, a[1] as f64, a[2] as f64), state: a[3] as f64, ..Contact::NONE };
                        }
                        let cholesky = rt.cholesky.as_mut().ok_or_else(|| Error::internal_solver("no Cholesky factor"))?;
                        // the CPU engine's solve: the filtered PCG where contacts are held
                        cholesky_solve_held(m, &params, cholesky, &contacts, &r, &mut delta, &mut cg)?;
                        for (u, d) in upload.iter_mut().zip(&delta) {
                            *u = [d.x as f32, d.y as f32, d.z as f32, 0.0];
                        }
                        split.solve_ms += t.elapsed().as_secs_f64() * 1e3;
                        let t = web_time::Instant::now();
                        // the PCG's solution x; local_global_advance reads it
                        st.counters.write_buffer(
                            queue,
                            &self.buffers.pcg.vectors,
                            SOLUTION_VECTOR as u64 * vector_bytes,
                            bytemuck::cast_slice(&upload),
                        );
                        split.upload_ms += t.elapsed().as_secs_f64() * 1e3;
                    }
                }
            }
            if !end.is_empty() {
                let mut raw = st.counters.begin_pass(&mut enc, "springsim.collide", None);
                end.encode(&mut CountedPass::new(&mut raw, &st.counters), 1 - p, n, step);
            }
            p ^= 1;
        }
        if p == 1 {
            enc.copy_buffer_to_buffer(&st.state[1], 0, &st.state[0], 0, st.state_bytes());
        }
        let t = web_time::Instant::now();
        st.counters.submit(queue, enc.finish());
        wait()?;
        if !profile {
            split.global_ms += t.elapsed().as_secs_f64() * 1e3;
        }
        split.total_ms = t_frame.elapsed().as_secs_f64() * 1e3;
        Ok(split)
    }
}
