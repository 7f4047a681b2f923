//! The build of one smoothed-aggregation level (the notes of [`super::multigrid`]): strength of
//! connection and greedy aggregation, ω from ρ(D⁻¹A), the smoothed prolongator P = (I − ω D⁻¹A) P̂, R = Pᵀ
//! and the Galerkin product R·A·P. Every step reads the level's matrix through [`Rows`], a row at a
//! time, so the same code builds a level from a stored [`Csr`] (the CPU engine's hierarchy) or from rows
//! formed when they are read (the GPU's, whose finest matrix is never stored on the host:
//! [`super::global_mg`]); both give the same hierarchy bit for bit.

pub use super::csr::merge_row;
use super::csr::Csr;
use super::PAR_N;

/// The strength threshold θ of the aggregation.
pub const THETA: f64 = 0.08;

/// Power iterations for ρ(D⁻¹A) per level.
const RHO_ITERATIONS: usize = 20;

/// A matrix read a row at a time.
pub trait Rows {
    /// Rows.
    fn rows(&self) -> usize;

    /// Row i into `out` (cleared first): its entries in increasing columns, one per column, as
    /// [`Csr::from_rows`] stores them.
    fn row_into(&self, i: usize, out: &mut Vec<(u32, f64)>);
}

impl Rows for Csr {
    fn rows(&self) -> usize {
        Csr::rows(self)
    }

    fn row_into(&self, i: usize, out: &mut Vec<(u32, f64)>) {
        out.clear();
        out.extend(self.row(i).map(|(j, v)| (j as u32, v)));
    }
}

/// The diagonal of `a` (0 where a row has no diagonal entry).
pub fn diag(a: &impl Rows) -> Vec<f64> {
    let mut row = Vec::new();
    (0..a.rows())
        .map(|i| {
            a.row_into(i, &mut row);
            row.iter().find(|&&(j, _)| j as usize == i).map_or(0.0, |&(_, v)| v)
        })
        .collect()
}

/// ρ(D⁻¹A) by power iteration from a fixed start (rows with a zero diagonal are left out). Each product's
/// rows are formed on the rayon pool for a large matrix (each entry alone: the result does not depend on
/// the split).
fn rho_dinv_a(a: &(impl Rows + Sync), dinv: &[f64]) -> f64 {
    use rayon::prelude::*;
    let n = a.rows();
    let mut x: Vec<f64> = (0..n).map(|i| if dinv[i] > 0.0 { 1.0 + ((i * 7919) % 17) as f64 / 17.0 } else { 0.0 }).collect();
    let mut y = vec![0.0; n];
    let mut rho = 0.0;
    for _ in 0..RHO_ITERATIONS {
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm == 0.0 {
            return 1.0;
        }
        let xs = &x[..];
        let product = |row: &mut Vec<(u32, f64)>, (i, yi): (usize, &mut f64)| {
            a.row_into(i, row);
            *yi = dinv[i] * row.iter().map(|&(j, v)| v * xs[j as usize]).sum::<f64>() / norm;
        };
        if n < PAR_N {
            let mut row = Vec::new();
            y.iter_mut().enumerate().for_each(|e| product(&mut row, e));
        } else {
            y.par_iter_mut().with_min_len(PAR_N / 4).enumerate().for_each_init(Vec::new, product);
        }
        rho = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        std::mem::swap(&mut x, &mut y);
    }
    rho
}

/// The Jacobi sweep's weights ω/a_ii per row (0 on empty rows), ω = 4/(3ρ(D⁻¹A)), and the number of
/// live rows (a positive diagonal).
pub fn smoothing(a: &(impl Rows + Sync)) -> (Vec<f64>, usize) {
    let d = diag(a);
    let dinv: Vec<f64> = d.iter().map(|&v| if v > 0.0 { 1.0 / v } else { 0.0 }).collect();
    let live = d.iter().filter(|&&v| v > 0.0).count();
    drop(d);
    let omega = 4.0 / (3.0 * rho_dinv_a(a, &dinv).max(1e-12));
    (dinv.iter().map(|v| v * omega).collect(), live)
}

/// The greedy aggregation of the rows of `a` with a nonzero diagonal (Vaněk et al. §3.1): the aggregate
/// of each row (`u32::MAX` for empty rows) and the number of aggregates.
pub fn aggregate(a: &impl Rows) -> (Vec<u32>, usize) {
    let n = a.rows();
    let d = diag(a);
    let mut row = Vec::new();
    // the strong neighbours of every row in compressed rows (u32), not a Vec per row; counted first, so
    // that the list is allocated once at its size
    let is_strong =
        |i: usize, &(j, v): &(u32, f64)| j as usize != i && d[j as usize] > 0.0 && v.abs() >= THETA * (d[i] * d[j as usize]).sqrt();
    let mut list_ptr: Vec<u32> = Vec::with_capacity(n + 1);
    list_ptr.push(0);
    for i in 0..n {
        a.row_into(i, &mut row);
        let count = list_ptr[i] + row.iter().filter(|e| is_strong(i, e)).count() as u32;
        list_ptr.push(count);
    }
    let mut list: Vec<u32> = Vec::with_capacity(list_ptr[n] as usize);
    for i in 0..n {
        a.row_into(i, &mut row);
        list.extend(row.iter().filter(|e| is_strong(i, e)).map(|&(j, _)| j));
    }
    let lists = |i: usize| &list[list_ptr[i] as usize..list_ptr[i + 1] as usize];
    let strong = |i: usize| lists(i).iter().map(|&j| j as usize);
    const NONE: u32 = u32::MAX;
    let mut agg = vec![NONE; n];
    let mut count = 0u32;
    // 1: roots whose whole strong neighbourhood is free
    for i in 0..n {
        if d[i] <= 0.0 || agg[i] != NONE || strong(i).any(|j| agg[j] != NONE) {
            continue;
        }
        agg[i] = count;
        for j in strong(i) {
            agg[j] = count;
        }
        count += 1;
    }
    // 2: the rest join a neighbouring aggregate of pass 1 (the strongest connection)
    let first = agg.clone();
    for i in 0..n {
        if d[i] <= 0.0 || agg[i] != NONE {
            continue;
        }
        a.row_into(i, &mut row);
        let best =
            row.iter().filter(|&&(j, _)| first[j as usize] != NONE && lists(i).contains(&j)).max_by(|x, y| x.1.abs().total_cmp(&y.1.abs()));
        if let Some(&(j, _)) = best {
            agg[i] = first[j as usize];
        }
    }
    drop(first);
    // 3: what is left forms aggregates with its unaggregated strong neighbours
    for i in 0..n {
        if d[i] <= 0.0 || agg[i] != NONE {
            continue;
        }
        agg[i] = count;
        for j in strong(i) {
            if agg[j] == NONE {
                agg[j] = count;
            }
        }
        count += 1;
    }
    (agg, count as usize)
}

/// The smoothed prolongator P = (I − ω D⁻¹ A) P̂ of the aggregation `agg` (`nc` aggregates), P̂ the
/// normalised constant on each aggregate, `wdinv` = ω D⁻¹: row by row, each as the stored product
/// A·P̂ and the sum of two matrices would give it, bit for bit, without holding A·P̂ or P̂.
pub fn prolongator(a: &impl Rows, wdinv: &[f64], agg: &[u32], nc: usize) -> Csr {
    const NONE: u32 = u32::MAX;
    let mut size = vec![0.0f64; nc];
    for &c in agg {
        if c != NONE {
            size[c as usize] += 1.0;
        }
    }
    // P̂'s value on each aggregate
    let tent: Vec<f64> = size.iter().map(|s| 1.0 / s.sqrt()).collect();
    drop(size);
    let (mut acc, mut seen, mut cols) = (vec![0.0; nc], vec![u32::MAX; nc], Vec::<u32>::new());
    let mut a_row = Vec::new();
    let rows = (0..a.rows()).map(|i| {
        // row i of A·P̂ (Gustavson's product, as `Csr::matmul` forms it)
        cols.clear();
        a.row_into(i, &mut a_row);
        for &(k, av) in &a_row {
            let c = agg[k as usize];
            if c == NONE {
                continue;
            }
            if seen[c as usize] != i as u32 {
                seen[c as usize] = i as u32;
                acc[c as usize] = 0.0;
                cols.push(c);
            }
            acc[c as usize] += av * tent[c as usize];
        }
        cols.sort_unstable();
        let mut row: Vec<(u32, f64)> = cols.iter().map(|&c| (c, -wdinv[i] * acc[c as usize])).collect();
        if agg[i] != NONE {
            row.push((agg[i], tent[agg[i] as usize]));
        }
        row
    });
    Csr::from_rows(nc, rows)
}

/// The Galerkin product R·(A·P) as `r.matmul(&a.matmul(p))` computes it, bit for bit, without holding
/// A·P: each row of A·P is formed when a row of R needs it (again for each row of R that does), so the
/// host holds one row of it instead of a matrix as large as A.
pub fn galerkin(r: &Csr, a: &impl Rows, p: &Csr) -> Csr {
    let nc = p.cols;
    // R·(AP)'s accumulator, as `matmul`'s
    let (mut acc, mut seen, mut cols) = (vec![0.0; nc], vec![u32::MAX; nc], Vec::<u32>::new());
    // one row of A·P: values, the generation that last wrote each column, its columns
    let (mut ap, mut gen, mut ap_cols) = (vec![0.0; nc], vec![0usize; nc], Vec::<u32>::new());
    let mut a_row = Vec::new();
    let mut now = 0usize;
    let rows = (0..r.rows()).map(|c| {
        cols.clear();
        for (k, rv) in r.row(c) {
            now += 1;
            ap_cols.clear();
            a.row_into(k, &mut a_row);
            for &(kk, av) in &a_row {
                for (j, pv) in p.row(kk as usize) {
                    if gen[j] != now {
                        gen[j] = now;
                        ap[j] = 0.0;
                        ap_cols.push(j as u32);
                    }
                    ap[j] += av * pv;
                }
            }
            // the row of A·P in column order, as the stored product holds it
            ap_cols.sort_unstable();
            for &j in &ap_cols {
                let (j, v) = (j as usize, ap[j as usize]);
                if seen[j] != c as u32 {
                    seen[j] = c as u32;
                    acc[j] = 0.0;
                    cols.push(j as u32);
                }
                acc[j] += rv * v;
            }
        }
        cols.iter().map(|&j| (j, acc[j as usize])).collect::<Vec<_>>()
    });
    Csr::from_rows(nc, rows)
}

/// The next level below a level of matrix `a` whose smoothing weights are `wdinv` and that has `live`
/// live rows: (P, R = Pᵀ, the coarse matrix R·A·P), or `None` when the aggregation does not coarsen
/// usefully (no aggregate, or more than 90% of the live rows; e.g. no strong connections).
pub fn coarsen(a: &impl Rows, wdinv: &[f64], live: usize) -> Option<(Csr, Csr, Csr)> {
    let (agg, nc) = aggregate(a);
    if nc == 0 || nc * 10 > live * 9 {
        return None;
    }
    let p = prolongator(a, wdinv, &agg, nc);
    drop(agg);
    let r = p.transpose();
    let coarse = galerkin(&r, a, &p);
    Some((p, r, coarse))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::multigrid::global_matrix;
    use crate::reference::local_global::LocalGlobalParams;
    use crate::reference::model::CpuModel;

    #[test]
    fn the_galerkin_product_is_the_two_matmuls_bit_for_bit() {
        let cm = CpuModel::new(&crate::model::cloth(12, None).expect("a cloth")).expect("laid out");
        let a = global_matrix(&cm, &LocalGlobalParams::new(&cm, 1.0 / 60.0));
        let (agg, nc) = aggregate(&a);
        let tent = Csr::from_rows(nc, agg.iter().map(|&c| if c == u32::MAX { Vec::new() } else { vec![(c, 0.5)] }));
        let p = Csr::from_rows(
            nc,
            (0..a.rows()).map(|i| {
                let mut row: Vec<(u32, f64)> = a.matmul(&tent).row(i).map(|(c, v)| (c as u32, -0.3 * v)).collect();
                row.extend(tent.row(i).map(|(c, v)| (c as u32, v)));
                row
            }),
        );
        let r = p.transpose();
        let fused = galerkin(&r, &a, &p);
        let two = r.matmul(&a.matmul(&p));
        assert!(fused.nnz() > nc, "a coarse matrix with off-diagonal entries ({} entries, {nc} rows)", fused.nnz());
        assert_eq!((fused.ptr, fused.col), (two.ptr, two.col));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&fused.val), bits(&two.val));
    }

    #[test]
    fn the_prolongator_is_the_products_of_the_tentative_one_bit_for_bit() {
        let cm = CpuModel::new(&crate::model::cloth(12, None).expect("a cloth")).expect("laid out");
        let a = global_matrix(&cm, &LocalGlobalParams::new(&cm, 1.0 / 60.0));
        let (wdinv, _) = smoothing(&a);
        let (agg, nc) = aggregate(&a);
        let mut size = vec![0.0f64; nc];
        agg.iter().filter(|&&c| c != u32::MAX).for_each(|&c| size[c as usize] += 1.0);
        let tent =
            Csr::from_rows(nc, agg.iter().map(|&c| if c == u32::MAX { Vec::new() } else { vec![(c, 1.0 / size[c as usize].sqrt())] }));
        let ap = a.matmul(&tent);
        let two = Csr::from_rows(
            nc,
            (0..a.rows()).map(|i| {
                let mut row: Vec<(u32, f64)> = ap.row(i).map(|(c, v)| (c as u32, -wdinv[i] * v)).collect();
                row.extend(tent.row(i).map(|(c, v)| (c as u32, v)));
                row
            }),
        );
        let p = prolongator(&a, &wdinv, &agg, nc);
        assert!(p.nnz() > a.rows(), "a smoothed prolongator ({} entries, {} rows)", p.nnz(), a.rows());
        assert_eq!((&p.ptr, &p.col), (&two.ptr, &two.col));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&p.val), bits(&two.val));
    }
}
