// slatec-test: no-harness
// Device new/delete: new T, new T(args), new T[n], ::new, placement new, delete, delete[], ::delete, ::operator new/delete, an explicit destructor call.
#include <new>

struct Node {
  int v;
  __device__ Node(int x) : v(x) {}
  __device__ ~Node() {}
};

__global__ void heap_nodes(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int* scratch = new int[n];
  Node* q = new Node(i);
  Node* r = ::new Node(static_cast<int>(blockIdx.x));
  alignas(Node) unsigned char buf[sizeof(Node)];
  Node* s = new (buf) Node(i + 1);
  int* one = new int;
  void* raw = ::operator new(16);
  ::operator delete(raw);
  *one = n;
  for (int k = 0; k < n; ++k) scratch[k] = k;
  out[i] = q->v + r->v + s->v + *one + scratch[n - 1];
  s->~Node();
  delete q;
  ::delete r;
  delete[] scratch;
  delete one;
}

int main() {
  int* out = nullptr;
  heap_nodes<<<4, 32>>>(out, 8);
  return 0;
}
