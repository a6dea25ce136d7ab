//! Padded local arrays and boxes of cells in them.

/// The padded array one PE stores: its interior block plus a ghost layer of
/// width `halo[a]` on both sides of each axis `a`. Row-major, x fastest; the
/// interior starts at padded coordinate `halo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalLayout {
    /// Interior cells per axis `[ez, ey, ex]`.
    pub extent: [usize; 3],
    /// Ghost width per axis (0 on an inactive axis).
    pub halo: [usize; 3],
    /// Padded size per axis: `extent + 2 * halo`.
    pub dims: [usize; 3],
    /// Element strides per axis; `strides[2] == 1`.
    pub strides: [usize; 3],
}

impl LocalLayout {
    /// The layout of a block of `extent` interior cells with ghost widths `halo`.
    pub fn new(extent: [usize; 3], halo: [usize; 3]) -> LocalLayout {
        let dims: [usize; 3] = std::array::from_fn(|a| extent[a] + 2 * halo[a]);
        LocalLayout {
            extent,
            halo,
            dims,
            strides: [dims[1] * dims[2], dims[2], 1],
        }
    }

    /// Elements of the padded array.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// Whether the padded array has no elements (never, for a valid block).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Linear index of padded coordinates `(z, y, x)`.
    pub fn index(&self, z: usize, y: usize, x: usize) -> usize {
        debug_assert!(
            z < self.dims[0] && y < self.dims[1] && x < self.dims[2],
            "({z}, {y}, {x}) outside padded dims {:?}",
            self.dims
        );
        z * self.strides[0] + y * self.strides[1] + x
    }

    /// Linear index of padded coordinates given as an array.
    pub fn index_of(&self, c: [usize; 3]) -> usize {
        self.index(c[0], c[1], c[2])
    }

    /// The interior cells, in padded coordinates.
    pub fn interior(&self) -> Box3 {
        Box3::new(
            self.halo,
            std::array::from_fn(|a| self.halo[a] + self.extent[a]),
        )
    }
}

/// A box of cells `lo ≤ c < hi` (half-open per axis), in padded coordinates
/// of some PE's [`LocalLayout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Box3 {
    /// First cell per axis (inclusive).
    pub lo: [usize; 3],
    /// One past the last cell per axis.
    pub hi: [usize; 3],
}

impl Box3 {
    /// The box `lo ≤ c < hi`.
    ///
    /// # Panics
    /// If `lo[a] > hi[a]` on some axis (a programmer error).
    pub fn new(lo: [usize; 3], hi: [usize; 3]) -> Box3 {
        assert!(
            (0..3).all(|a| lo[a] <= hi[a]),
            "inverted box {lo:?}..{hi:?}"
        );
        Box3 { lo, hi }
    }

    /// Cells per axis.
    pub fn shape(&self) -> [usize; 3] {
        std::array::from_fn(|a| self.hi[a] - self.lo[a])
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether the box holds no cell.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every cell of `other` is in `self` (an empty `other` always is).
    pub fn contains(&self, other: &Box3) -> bool {
        other.is_empty() || (0..3).all(|a| self.lo[a] <= other.lo[a] && other.hi[a] <= self.hi[a])
    }

    /// Whether the two boxes share a cell.
    pub fn intersects(&self, other: &Box3) -> bool {
        (0..3).all(|a| self.lo[a].max(other.lo[a]) < self.hi[a].min(other.hi[a]))
    }

    /// The same box with axis `axis` limited to `lo..hi`.
    pub fn with_axis(&self, axis: usize, lo: usize, hi: usize) -> Box3 {
        let mut b = *self;
        b.lo[axis] = lo;
        b.hi[axis] = hi;
        Box3::new(b.lo, b.hi)
    }

    /// The cells in row-major order (x fastest): the order pulses pack and
    /// unpack in.
    pub fn cells(&self) -> impl Iterator<Item = [usize; 3]> + '_ {
        let (lo, hi) = (self.lo, self.hi);
        (lo[0]..hi[0]).flat_map(move |z| {
            (lo[1]..hi[1]).flat_map(move |y| (lo[2]..hi[2]).map(move |x| [z, y, x]))
        })
    }
}
