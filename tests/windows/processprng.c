/* bcryptprimitives.dll for wine 8.0, which lacks it: Rust's standard library imports
 * ProcessPrng from it at start-up (Windows 10 and later have it). This one answers with
 * RtlGenRandom (advapi32's SystemFunction036), which wine has. Built with MinGW-w64 beside the
 * test's trackbench.exe by tests/windows.rs; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG n = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        length -= n;
    }
    return TRUE;
}
