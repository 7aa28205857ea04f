-- One playback trial: snapshot SNAPSHOT of the recorded session (bench/ardour.py makes one per
-- trial with only its first N tracks, and evicts the session's files from the page cache
-- before it: a session opened cold), Ardour's buffering PRESET (Small, Medium, Large); once the
-- butler has filled every ring, the transport rolls for SECS seconds, and the periods each
-- track went silent are counted (trackbench dropout counter after its disk reader).
-- usage: luasession play.lua DIR SNAPSHOT N SECS PRESET BYTES_PER_SECOND
--        (prints "result tracks=… dropouts=… …")
local dir, snapshot, n, secs, preset, rate = arg[1], arg[2], tonumber (arg[3]), tonumber (arg[4]), arg[5], tonumber (arg[6])
local be = AudioEngine:set_backend ("None (Dummy)", "", "")
be:set_device_name ("Silence")
be:set_sample_rate (48000)
be:set_buffer_size (1024)
assert (AudioEngine:start (false) == 0, "the Dummy backend did not start")
assert (load_session (dir, snapshot), "could not load snapshot " .. snapshot .. " of the session in " .. dir)
assert (ARDOUR.BufferingPreset[preset], "preset must be Small, Medium or Large, not " .. tostring (preset))
-- Through Custom, so that the preset is applied even when it is already the configured one.
ARDOUR.config ():set_buffering_preset (ARDOUR.BufferingPreset.Custom)
ARDOUR.config ():set_buffering_preset (ARDOUR.BufferingPreset[preset])

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
Session:request_locate (0, false, ARDOUR.LocateTransportDisposition.MustStop, ARDOUR.TransportRequestSource.TRS_UI)
-- The butler's fill is done when at least five seconds of every track have come from the disk
-- (the load fills before the preset is applied, at 10 s or more) and nothing more is read for
-- four seconds.
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
Session:request_roll (ARDOUR.TransportRequestSource.TRS_UI)
-- What the device delivered in the second half of the roll, against what the tracks played
-- meanwhile: below the demand, the rings and the read-ahead are draining even where the roll
-- was too short for a ring to run dry.
local half = math.floor (secs / 2)
sleep (half)
local mid_read, mid_rolled = read_bytes (), Session:transport_sample () / 48000
sleep (secs - half)
local rolled = Session:transport_sample () / 48000
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
print (string.format ("result tracks=%d preset=%s fill_s=%d rolled_s=%.1f read_mb_per_s=%.2f late_read_share=%.3f periods=%d dropouts=%d tracks_hit=%d first_dropout_s=%.1f",
	n, preset, waited, rolled, read / rolled / 1e6, late_share, periods, dropouts, tracks_hit, first < 0 and -1 or first * 1024 / 48000))
close_session ()
