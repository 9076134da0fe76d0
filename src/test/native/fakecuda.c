/*
 * A stand-in for the NVIDIA driver's libcuda.so.1, for tests on machines without a GPU.
 *
 * It implements the few driver-API calls runjob's probe makes (through JCuda's native library,
 * which links against libcuda.so.1), with devices described by the environment, and behaves as the
 * real driver does where runjob depends on it:
 *
 *   FAKECUDA_GPUS     devices separated by ';', each "name|total MiB|used MiB|major.minor|dddd:bb:dd"
 *                     (PCI domain:bus:device, hex), optionally followed by "|CODE": the CUresult
 *                     that creating a context on it fails with (2 out of memory: a full GPU;
 *                     46 device unavailable: exclusive-process mode and busy). Devices are listed in
 *                     the driver's default order (fastest first), which need not be PCI bus order.
 *                     Unset or empty: no device, and cuInit fails with CUDA_ERROR_NO_DEVICE, as
 *                     the real driver does.
 *   FAKECUDA_DRIVER   the driver API version cuDriverGetVersion reports (default 12040).
 *   CUDA_DEVICE_ORDER PCI_BUS_ID orders devices by bus id; anything else keeps the listed order.
 *   CUDA_VISIBLE_DEVICES  honoured as the driver does: a comma-separated list of indices into that
 *                     order; enumeration stops at the first index that does not exist.
 *   FAKECUDA_LOG      if set, a file that gets one line per primary-context retain and release,
 *                     so a test can check that the probe releases what it takes.
 *
 * Build: cc -shared -fPIC -o libcuda.so.1 fakecuda.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
};

enum {
    ATTR_PCI_BUS_ID = 33,
    ATTR_PCI_DEVICE_ID = 34,
    ATTR_PCI_DOMAIN_ID = 50,
    ATTR_CC_MAJOR = 75,
    ATTR_CC_MINOR = 76,
};

#define MAX_DEVICES 16

struct device {
    char name[256];
    size_t total, used;
    int major, minor;
    unsigned domain, bus, dev;
    int context_error;
};

static struct device listed[MAX_DEVICES];
static struct device visible[MAX_DEVICES];
static int listed_count, visible_count, initialised;
static int current = -1;
static char contexts[MAX_DEVICES]; /* a context handle is the address of its device's slot */

static int parse_device(char *text, struct device *d) {
    char *fields[6];
    int n = 0;
    for (char *save = NULL, *f = strtok_r(text, "|", &save); f && n < 6; f = strtok_r(NULL, "|", &save)) {
        fields[n++] = f;
    }
    if (n < 5) {
        return 0;
    }
    d->context_error = n == 6 ? atoi(fields[5]) : 0;
    snprintf(d->name, sizeof d->name, "%s", fields[0]);
    d->total = strtoull(fields[1], NULL, 10) << 20;
    d->used = strtoull(fields[2], NULL, 10) << 20;
    return sscanf(fields[3], "%d.%d", &d->major, &d->minor) == 2
        && sscanf(fields[4], "%x:%x:%x", &d->domain, &d->bus, &d->dev) == 3;
}

static int by_bus(const void *a, const void *b) {
    const struct device *x = a, *y = b;
    if (x->domain != y->domain) return x->domain < y->domain ? -1 : 1;
    if (x->bus != y->bus) return x->bus < y->bus ? -1 : 1;
    return x->dev < y->dev ? -1 : (x->dev > y->dev);
}

static void log_line(const char *what, int device) {
    const char *path = getenv("FAKECUDA_LOG");
    if (path && *path) {
        FILE *f = fopen(path, "a");
        if (f) {
            fprintf(f, "%s %d\n", what, device);
            fclose(f);
        }
    }
}

CUresult cuInit(unsigned int flags) {
    (void) flags;
    if (initialised) {
        return visible_count ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
    }
    initialised = 1;
    const char *spec = getenv("FAKECUDA_GPUS");
    if (spec) {
        char *copy = strdup(spec);
        for (char *save = NULL, *one = strtok_r(copy, ";", &save); one && listed_count < MAX_DEVICES;
                one = strtok_r(NULL, ";", &save)) {
            if (parse_device(one, &listed[listed_count])) {
                listed_count++;
            }
        }
        free(copy);
    }
    const char *order = getenv("CUDA_DEVICE_ORDER");
    if (order && strcmp(order, "PCI_BUS_ID") == 0) {
        qsort(listed, listed_count, sizeof listed[0], by_bus);
    }
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (cvd == NULL) {
        memcpy(visible, listed, sizeof listed);
        visible_count = listed_count;
    } else {
        char *copy = strdup(cvd);
        for (char *save = NULL, *one = strtok_r(copy, ",", &save); one && visible_count < MAX_DEVICES;
                one = strtok_r(NULL, ",", &save)) {
            char *end;
            long i = strtol(one, &end, 10);
            if (end == one || *end != '\0' || i < 0 || i >= listed_count) {
                break;
            }
            visible[visible_count++] = listed[i];
        }
        free(copy);
    }
    return visible_count ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

static CUresult check(CUdevice d) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    return d >= 0 && d < visible_count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDriverGetVersion(int *version) {
    const char *v = getenv("FAKECUDA_DRIVER");
    *version = v && *v ? atoi(v) : 12040;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    *count = visible_count;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    CUresult r = check(ordinal);
    if (r == CUDA_SUCCESS) *device = ordinal;
    return r;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    CUresult r = check(d);
    if (r == CUDA_SUCCESS) snprintf(name, (size_t) len, "%s", visible[d].name);
    return r;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
    CUresult r = check(d);
    if (r == CUDA_SUCCESS) *bytes = visible[d].total;
    return r;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice d) {
    CUresult r = check(d);
    if (r != CUDA_SUCCESS) return r;
    switch (attribute) {
    case ATTR_PCI_BUS_ID: *value = (int) visible[d].bus; return CUDA_SUCCESS;
    case ATTR_PCI_DEVICE_ID: *value = (int) visible[d].dev; return CUDA_SUCCESS;
    case ATTR_PCI_DOMAIN_ID: *value = (int) visible[d].domain; return CUDA_SUCCESS;
    case ATTR_CC_MAJOR: *value = visible[d].major; return CUDA_SUCCESS;
    case ATTR_CC_MINOR: *value = visible[d].minor; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d) {
    CUresult r = check(d);
    if (r == CUDA_SUCCESS && visible[d].context_error) {
        log_line("refused", d);
        return visible[d].context_error;
    }
    if (r == CUDA_SUCCESS) {
        *ctx = &contexts[d];
        log_line("retain", d);
    }
    return r;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    CUresult r = check(d);
    if (r == CUDA_SUCCESS) log_line("release", d);
    return r;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
    if (ctx == NULL) {
        current = -1;
        return CUDA_SUCCESS;
    }
    long i = (char *) ctx - contexts;
    if (i < 0 || i >= visible_count) return CUDA_ERROR_INVALID_CONTEXT;
    current = (int) i;
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
    if (current < 0) return CUDA_ERROR_INVALID_CONTEXT;
    *free_bytes = visible[current].total - visible[current].used;
    *total_bytes = visible[current].total;
    return CUDA_SUCCESS;
}
