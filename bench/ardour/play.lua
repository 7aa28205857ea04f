-- One playback trial: snapshot SNAPSHOT of the recorded session (bench/ardour.py makes one per
-- trial with only its first N tracks, and evicts the session's files from the page cache
-- before it: a session opened cold), Ardour's buffering PRESET (Small, Medium, Large); once the
-- butler has filled every ring, the transport rolls for SECS seconds, and the periods each
-- track went silent are counted (trackbench dropout counter after its disk reader).
-- With DEVICE_STAT (the capped device's /sys/block/NAME/stat), also what the device itself
-- completed in the roll's second half (reads and bytes a second), after the throttle: whether it
-- was saturated, that is whether the tracks were living on their rings and read-ahead.
-- usage: luasession play.lua DIR SNAPSHOT N SECS PRESET BYTES_PER_SECOND [DEVICE_STAT]
--        (prints "result tracks=… dropouts=… …")
local dir, snapshot, n, secs, preset, rate = arg[1], arg[2], tonumber (arg[3]), tonumber (arg[4]), arg[5], tonumber (arg[6])
local device_stat = arg[7]
local be = AudioEngine:set_backend ("None (Dummy)", "", "")
be:set_device_name ("Silence")
be:set_sample_rate (48000)
be:set_buffer_size (1024)
assert (AudioEngine:start (false) == 0, "the Dummy backend did not start")
assert (ARDOUR.BufferingPreset[preset], "preset must be Small, Medium or Large, not " .. tostring (preset))
-- The preset before the session, as a user who chose it in the preferences opens one: the load
-- fills rings of the preset's size. (Applied after the load, the load's fill reads 10.75 s of
-- every file at the configured Medium, and a Small roll then starts with those seconds in the
-- page cache: a head start no user who set Small has.) Through Custom, so that the preset is
-- applied even when it is already the configured one.
ARDOUR.config ():set_buffering_preset (ARDOUR.BufferingPreset.Custom)
ARDOUR.config ():set_buffering_preset (ARDOUR.BufferingPreset[preset])
assert (load_session (dir, snapshot), "could not load snapshot " .. snapshot .. " of the session in " .. dir)

local meters = {}
for t in Session:get_tracks ():iter () do
	if t:active () then
		local p = ARDOUR.LuaAPI.new_luaproc (Session, "trackbench dropout counter")
		assert (not p:isnil (), "the dropout counter script was not found (ARDOUR_DATA_PATH)")
		t:add_processor_by_index (p, 0, nil, true)
		meters[#meters + 1] = p
	end
end
assert (#meters == n, "the snapshot has " .. #meters .. " active tracks, not " .. n)

local function read_bytes ()
	local f = io.open ("/proc/self/io")
	local s = f:read ("a")
	f:close ()
	return tonumber (string.match (s, "\nread_bytes: (%d+)"))
end
-- Reads completed and sectors read by the device (fields 1 and 3 of its stat), or nil.
local function device ()
	if not device_stat then return nil end
	local f = io.open (device_stat)
	local ios, _, sectors = string.match (f:read ("a"), "^%s*(%d+)%s+(%d+)%s+(%d+)")
	f:close ()
	return tonumber (ios), tonumber (sectors) * 512
end
-- A thread's time on a CPU and waiting for one (seconds, /proc/PID/task/TID/schedstat), summed
-- over the threads of that name: what the butler and the audio thread got of the two cores.
local pid = string.match (io.open ("/proc/self/stat"):read ("l"), "^(%d+)")
local function thread_times (name)
	local on, waiting = 0, 0
	local ls = io.popen ("ls /proc/" .. pid .. "/task")
	for tid in ls:lines () do
		local c = io.open ("/proc/" .. pid .. "/task/" .. tid .. "/comm")
		local s = io.open ("/proc/" .. pid .. "/task/" .. tid .. "/schedstat")
		if c and s then
			if c:read ("l") == name then
				local a, b = string.match (s:read ("l"), "^(%d+)%s+(%d+)")
				on, waiting = on + tonumber (a) / 1e9, waiting + tonumber (b) / 1e9
			end
		end
		if c then c:close () end
		if s then s:close () end
	end
	ls:close ()
	return on, waiting
end
Session:request_locate (0, false, ARDOUR.LocateTransportDisposition.MustStop, ARDOUR.TransportRequestSource.TRS_UI)
-- The butler's fill is done when at least five seconds of every track have come from the disk
-- (every preset's ring holds more) and nothing more is read for four seconds.
local least = 0.9 * n * 5 * rate
local last, still, waited = read_bytes (), 0, 0
while still < 4 or last < least do
	sleep (1)
	waited = waited + 1
	local now = read_bytes ()
	if now == last then still = still + 1 else still = 0 end
	last = now
	assert (waited < 1800, "the butler's fill did not end in 30 minutes")
end
local butler_on0, butler_waiting0 = thread_times ("butler")
local engine_on0 = thread_times ("audioengine")
Session:request_roll (ARDOUR.TransportRequestSource.TRS_UI)
-- What the device delivered in the second half of the roll, against what the tracks played
-- meanwhile: below the demand, the rings and the read-ahead are draining even where the roll
-- was too short for a ring to run dry.
local half = math.floor (secs / 2)
sleep (half)
local mid_read, mid_rolled = read_bytes (), Session:transport_sample () / 48000
local mid_ios, mid_bytes = device ()
sleep (secs - half)
local rolled = Session:transport_sample () / 48000
local end_ios, end_bytes = device ()
local butler_on, butler_waiting = thread_times ("butler")
local engine_on = thread_times ("audioengine")
local device_ios, device_bytes = -1, -1
if end_ios then
	-- The Dummy backend runs in real time: transport seconds are wall seconds.
	local span = math.max (1, rolled - mid_rolled)
	device_ios, device_bytes = (end_ios - mid_ios) / span, (end_bytes - mid_bytes) / span
end
local read = read_bytes () - last
local late_share = (read_bytes () - mid_read) / ((rolled - mid_rolled) * n * rate)
local dropouts, tracks_hit, periods, first = 0, 0, 0, -1
for _, p in ipairs (meters) do
	local c = p:to_insert ():plugin (0):to_luaproc ():shmem ():to_int (0):array ()
	periods = periods + c[1]
	dropouts = dropouts + c[2]
	if c[2] > 0 then
		tracks_hit = tracks_hit + 1
		if first < 0 or c[3] < first then first = c[3] end
	end
end
Session:request_stop (false, false, ARDOUR.TransportRequestSource.TRS_UI)
sleep (1)
print (string.format ("result tracks=%d preset=%s fill_s=%d rolled_s=%.1f read_mb_per_s=%.2f late_read_share=%.3f periods=%d dropouts=%d tracks_hit=%d first_dropout_s=%.1f device_ios_per_s=%.1f device_bytes_per_s=%.0f butler_cpu_s=%.2f butler_runqueue_s=%.2f engine_cpu_s=%.2f",
	n, preset, waited, rolled, read / rolled / 1e6, late_share, periods, dropouts, tracks_hit, first < 0 and -1 or first * 1024 / 48000, device_ios, device_bytes,
	butler_on - butler_on0, butler_waiting - butler_waiting0, engine_on - engine_on0))
close_session ()
