# slatec — the two commands that matter: `make demo` and `make test`.
GO       ?= go
CUDA     ?= .cuda
NVCC     ?= $(CUDA)/nvidia/cu13/bin/nvcc
export SLATEC_CUDA_PREFIX := $(abspath $(CUDA))
# An execution count, not a duration: a -fuzztime duration races the fuzz
# coordinator's deadline on a loaded machine (Go issue 75804, fixed in Go 1.27)
# and fails with "context deadline exceeded" and no crasher.
FUZZTIME ?= 100000x

.PHONY: all build demo test cuda-tools vet unit fuzz nvcc-check project-check gpu-build gpu-test clean

all: build

build:
	$(GO) build -o slatec .

## demo: inspect a bundled kernel file, transform it, and show the result
## (the injected support code, ~2000 lines with the serve client, is cut from the display).
demo: build
	./slatec inspect examples/saxpy.cu
	@echo
	@echo "---- slatec transform examples/saxpy.cu (after the injected support code) ----"
	@./slatec transform -o - examples/saxpy.cu | sed -n '/end of slatec support/,$$p'
	@./slatec transform -o .demo_saxpy_slate.cu examples/saxpy.cu && echo "---- full output written to .demo_saxpy_slate.cu ----"

## test: everything CI runs; installs what it needs itself.
test: cuda-tools vet unit fuzz nvcc-check project-check

cuda-tools:
	./scripts/cuda-tools.sh $(CUDA)

## vet: also checks that everything builds without cgo (the transformer
## needs no C compiler; the runtime then reports at use that it needs cgo).
vet:
	$(GO) vet ./...
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	CGO_ENABLED=0 $(GO) build ./...
	CGO_ENABLED=0 $(GO) vet ./...

unit:
	$(GO) test ./...

fuzz:
	$(GO) test ./parser -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./transform -run '^$$' -fuzz FuzzTransform -fuzztime 20000x
	$(GO) test ./serve -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME)

nvcc-check: cuda-tools
	NVCC=$(NVCC) ./scripts/nvcc-check.sh testdata golden examples bench/topology

project-check: cuda-tools build
	NVCC=$(NVCC) ./scripts/project-check.sh

## gpu-build: what the GPU machine needs from here (it has no Go): the slatec
## binary, the runtime's GPU test binary, transformed real-world samples.
# The binary names its commit in results (slatec bench's corun.json) even
# where the build has no VCS information.
GPU_COMMIT = $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
gpu-build:
	mkdir -p .gpu
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags "-s -w -X github.com/slatec/slatec/cli.stampedCommit=$(GPU_COMMIT)" -o .gpu/slatec .
	CGO_ENABLED=1 $(GO) test -c -ldflags "-s -w" -o .gpu/runtime.test ./runtime
	CGO_ENABLED=1 $(GO) test -c -ldflags "-s -w" -o .gpu/profile.test ./profile
	@du -cb .gpu/* | tail -1 | awk '{ printf "gpu-build: .gpu is %.1f MiB (the device tool carries at most 64 MiB with the tree)\n", $$1 / 1048576 }'
	@if [ -d .realworld/cuda-samples ]; then ./scripts/realworld.sh transform; fi

## The co-running benchmark (slatec bench, issue 11) needs only .gpu/slatec:
##   run(command: "./scripts/corun-gpu.sh", carry: [".gpu"])   (QUICK=0 for the full run)
## gpu-test: run on the GPU machine through the device tool, for example
##   run(command: "STEPS='diff realworld runtime' ./scripts/gpu-session.sh", carry: [".gpu", ".realworld"])
## Results: $$OUT/summary.txt and $$OUT/results.tgz. See docs/GPU.md.
gpu-test:
	./scripts/gpu-session.sh

clean:
	rm -rf slatec .gpu
