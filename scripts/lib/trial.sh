# Shared by the real-world trial scripts (llmc-trial.sh, llmc-train-trial.sh,
# hpc-trial.sh, hecbench-trial.sh), sourced from the repository root: the
# defaults they share and the start of their transform step.
#
# The transformed programs run the persistent worker, not the native
# kernel: it is what they test and time.
export SLATE_MODE=${SLATE_MODE:-persistent}
SLATEC=${SLATEC:-.gpu/slatec}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}

# trial_outdir empties $OUTDIR and sets slatec and outdir to the slatec
# binary's and $OUTDIR's absolute paths (the transforms run from inside the
# programs' source directories, so that the outputs keep their layout).
trial_outdir() {
    rm -rf "$OUTDIR"
    mkdir -p "$OUTDIR"
    slatec=$(realpath "$SLATEC")
    outdir=$(realpath "$OUTDIR")
}
