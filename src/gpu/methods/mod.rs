//! One integrator per method family, each owning its kernels, buffers and bind groups ([`integrator`]
//! holds the one in use): the explicit family, LEU, implicit Euler (with the PCG and its multigrid),
//! local/global (its kernels, integrator, rows and multigrid), and k₀'s power iteration.

pub mod explicit;
pub mod implicit;
pub mod integrator;
pub mod leu;
pub mod local_global;
pub mod pcg;
pub mod power;
