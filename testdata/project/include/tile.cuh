// A class whose static member reads the block index (the CUB-style layout:
// a class template in a header, called from a kernel in another file).
// Transformed with the project, its persistent copy goes into the class
// here, and the kernel's copy calls it.
#pragma once

template <int kBlock>
struct Tile {
    __device__ static int index() { return blockIdx.x * kBlock + threadIdx.x; }
};
