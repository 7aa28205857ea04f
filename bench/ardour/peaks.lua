-- Loads the session once, with no cap, and waits until Ardour has built a peak file for each of
-- its sources, as it does the first time a session opens: otherwise the peak builder would read
-- every file in full beside the butler during the first trials.
-- usage: luasession peaks.lua DIR N
local dir, n = arg[1], tonumber (arg[2])
local be = AudioEngine:set_backend ("None (Dummy)", "", "")
be:set_sample_rate (48000)
be:set_buffer_size (1024)
assert (AudioEngine:start (false) == 0, "the Dummy backend did not start")
assert (load_session (dir, "trackbench"), "could not load the session in " .. dir)
local function peaks ()
	local p = io.popen ("ls '" .. dir .. "/peaks' | grep -c peak")
	local c = tonumber (p:read ("a")) or 0
	p:close ()
	return c
end
local waited = 0
while peaks () < n and waited < 3600 do
	sleep (1)
	waited = waited + 1
end
sleep (2)
print ("peaks", peaks (), "after", waited, "s")
close_session ()
