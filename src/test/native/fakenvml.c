/*
 * A stand-in for the NVIDIA driver's libnvidia-ml.so.1 (NVML), for tests on machines without a GPU.
 *
 * It implements the NVML calls runjob's GPU sampler makes, for the devices the stand-in CUDA
 * driver has (FAKECUDA_GPUS, see fakecuda.c), in PCI bus order as NVML numbers them (NVML ignores
 * CUDA_VISIBLE_DEVICES), with values a test scripts:
 *
 *   FAKECUDA_GPUS   the devices: "name|total MiB|used MiB|major.minor|dddd:bb:dd" separated by ';'.
 *                   Unset or empty: nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED (9), as it
 *                   does on a machine without the driver.
 *   FAKENVML_FILE   read at each call: line N is device N's "utilization% usedMiB powerMilliwatts
 *                   temperatureC smClockMHz"; a field "NA" answers NVML_ERROR_NOT_SUPPORTED (3), as
 *                   a GPU without that sensor does; a line that does not read as five fields answers
 *                   NVML_ERROR_UNKNOWN (999) for every value of that device. Without the file (or the
 *                   line): 0 %, FAKECUDA_GPUS's used MiB, no power reading, 30 C, 1000 MHz.
 *   FAKENVML_CALLS  if set, a file that gets one line per nvmlDeviceGetUtilizationRates call, so a
 *                   test can count samples.
 *   FAKENVML_PROCS  read at each call of nvmlDeviceGetComputeRunningProcesses_v3: lines "index pid
 *                   usedMiB", the compute processes on device index (a real process's pid, so that
 *                   /proc names its user and command). Without the file: none.
 *
 * Build: cc -shared -fPIC -o libnvidia-ml.so.1 fakenvml.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct device *nvmlDevice_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_UNKNOWN = 999,
};

typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
/* nvmlProcessInfo_t (v2): 24 bytes */
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;

#define MAX_DEVICES 16
#define NA -1L

struct device {
    unsigned long long total, used;
    unsigned domain, bus, dev;
};

static struct device devices[MAX_DEVICES];
static int count, initialised;

static int by_bus(const void *a, const void *b) {
    const struct device *x = a, *y = b;
    if (x->domain != y->domain) return x->domain < y->domain ? -1 : 1;
    if (x->bus != y->bus) return x->bus < y->bus ? -1 : 1;
    return x->dev < y->dev ? -1 : (x->dev > y->dev);
}

nvmlReturn_t nvmlInit_v2(void) {
    count = 0;
    const char *spec = getenv("FAKECUDA_GPUS");
    if (spec) {
        char *copy = strdup(spec);
        for (char *save = NULL, *one = strtok_r(copy, ";", &save); one && count < MAX_DEVICES; one = strtok_r(NULL, ";", &save)) {
            char name[256];
            unsigned long long total, used;
            int major, minor;
            struct device *d = &devices[count];
            if (sscanf(one, "%255[^|]|%llu|%llu|%d.%d|%x:%x:%x", name, &total, &used, &major, &minor, &d->domain, &d->bus, &d->dev) == 8) {
                d->total = total << 20;
                d->used = used << 20;
                count++;
            }
        }
        free(copy);
    }
    if (count == 0) {
        return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    qsort(devices, count, sizeof devices[0], by_bus);
    initialised = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
    initialised = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    *n = (unsigned) count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (i >= (unsigned) count) return NVML_ERROR_INVALID_ARGUMENT;
    *d = &devices[i];
    return NVML_SUCCESS;
}

/* Field k (0..4) of device d's line in FAKENVML_FILE: its value, NA, or NVML_ERROR_UNKNOWN's marker -2. */
static long field(nvmlDevice_t d, int k, long fallback) {
    const char *path = getenv("FAKENVML_FILE");
    int index = (int) (d - devices);
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    if (!f) return fallback;
    char line[512];
    int n = 0;
    long out = fallback;
    while (fgets(line, sizeof line, f)) {
        if (n++ != index) continue;
        char v[5][64];
        if (sscanf(line, "%63s %63s %63s %63s %63s", v[0], v[1], v[2], v[3], v[4]) != 5) {
            out = -2;
            break;
        }
        if (strcmp(v[k], "NA") == 0) {
            out = NA;
            break;
        }
        char *end;
        long value = strtol(v[k], &end, 10);
        out = *end == '\0' ? value : -2;
        break;
    }
    fclose(f);
    return out;
}

static nvmlReturn_t answer(long value, unsigned int *out) {
    if (value == NA) return NVML_ERROR_NOT_SUPPORTED;
    if (value < 0) return NVML_ERROR_UNKNOWN;
    *out = (unsigned) value;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    const char *calls = getenv("FAKENVML_CALLS");
    if (calls && *calls) {
        FILE *f = fopen(calls, "a");
        if (f) {
            fprintf(f, "utilization %d\n", (int) (d - devices));
            fclose(f);
        }
    }
    unsigned int gpu = 0;
    nvmlReturn_t r = answer(field(d, 0, 0), &gpu);
    u->gpu = gpu;
    u->memory = 0;
    return r;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    long used = field(d, 1, (long) (d->used >> 20));
    if (used == NA) return NVML_ERROR_NOT_SUPPORTED;
    if (used < 0) return NVML_ERROR_UNKNOWN;
    m->total = d->total;
    m->used = (unsigned long long) used << 20;
    m->free = m->total > m->used ? m->total - m->used : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    return answer(field(d, 2, NA), mw);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
    return answer(field(d, 3, 30), c);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (type != 1) return NVML_ERROR_INVALID_ARGUMENT; /* NVML_CLOCK_SM */
    return answer(field(d, 4, 1000), mhz);
}

/* As the driver does: with too small a buffer, the count needed and NVML_ERROR_INSUFFICIENT_SIZE. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *infos) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    int index = (int) (d - devices);
    const char *path = getenv("FAKENVML_PROCS");
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    unsigned found = 0;
    nvmlProcessInfo_t all[64];
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f) && found < 64) {
            int i;
            unsigned pid;
            unsigned long long mib;
            if (sscanf(line, "%d %u %llu", &i, &pid, &mib) == 3 && i == index) {
                all[found].pid = pid;
                all[found].usedGpuMemory = mib << 20;
                all[found].gpuInstanceId = all[found].computeInstanceId = 0xFFFFFFFFu;
                found++;
            }
        }
        fclose(f);
    }
    if (*n < found) {
        *n = found;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(infos, all, found * sizeof all[0]);
    *n = found;
    return NVML_SUCCESS;
}
