# slatec — the two commands that matter: `make demo` and `make test`.
GO       ?= go
CUDA     ?= .cuda
NVCC     ?= $(CUDA)/nvidia/cu13/bin/nvcc
export SLATEC_CUDA_PREFIX := $(abspath $(CUDA))
FUZZTIME ?= 20s

.PHONY: all build demo test cuda-tools vet unit fuzz nvcc-check gpu-build gpu-test bench-gpu clean

all: build

build:
	$(GO) build -o slatec .

## demo: transform a bundled kernel and show the result.
demo: build
	./slatec inspect examples/saxpy.cu
	./slatec transform -o - examples/saxpy.cu

## test: everything CI runs; installs what it needs itself.
test: cuda-tools vet unit fuzz nvcc-check

cuda-tools:
	./scripts/cuda-tools.sh $(CUDA)

vet:
	$(GO) vet ./...

unit:
	$(GO) test ./...

fuzz:
	$(GO) test ./parser -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)

nvcc-check: cuda-tools
	NVCC=$(NVCC) ./scripts/nvcc-check.sh testdata golden examples

clean:
	rm -rf slatec .gpu
