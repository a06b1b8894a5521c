#pragma once
// LINALG_HD marks math written once for both backends: __host__ __device__ under nvcc, plain inline
// functions under a host compiler. Every module's shared per-element math uses it.
#if defined(__CUDACC__)
#define LINALG_HD __host__ __device__ __forceinline__
#else
#define LINALG_HD inline
#endif
