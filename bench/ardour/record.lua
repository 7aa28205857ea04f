-- Makes the session the playback check plays: `n` mono tracks that Ardour itself records for
-- `secs` seconds from the Dummy backend's white noise, in its native `format` (float or int24).
-- usage: luasession record.lua DIR N SECS FORMAT [PRESET]
-- (PRESET: Ardour's buffering preset, Small, Medium or Large, for a trial of recording itself;
-- the configured one otherwise)
local dir, n, secs, format, preset = arg[1], tonumber (arg[2]), tonumber (arg[3]), arg[4], arg[5]
local be = AudioEngine:set_backend ("None (Dummy)", "", "")
be:set_device_name ("Uniform White Noise")
be:set_sample_rate (48000)
be:set_buffer_size (1024)
assert (AudioEngine:start (false) == 0, "the Dummy backend did not start")
-- The preset before the session: its tracks' capture buffers are made at that size.
if preset then
	assert (ARDOUR.BufferingPreset[preset], "preset must be Small, Medium or Large, not " .. tostring (preset))
	ARDOUR.config ():set_buffering_preset (ARDOUR.BufferingPreset.Custom)
	ARDOUR.config ():set_buffering_preset (ARDOUR.BufferingPreset[preset])
end
assert (create_session (dir, "trackbench", 48000), "could not create the session in " .. dir)
local formats = { float = ARDOUR.SampleFormat.Float, int24 = ARDOUR.SampleFormat.Int24 }
assert (formats[format], "format must be float or int24, not " .. tostring (format))
Session:cfg ():set_native_file_data_format (formats[format])
local tracks = Session:new_audio_track (1, 2, nil, n, "t", ARDOUR.PresentationInfo.max_order, ARDOUR.TrackMode.Normal, true, false)
assert (tracks:size () == n, "made " .. tracks:size () .. " tracks, not " .. n)
for t in tracks:iter () do
	t:rec_enable_control ():set_value (1, PBD.GroupControlDisposition.NoGroup)
end
-- Armed tracks settle (their capture buffers and files) before the transport rolls.
sleep (2)
Session:maybe_enable_record (false)
Session:request_roll (ARDOUR.TransportRequestSource.TRS_UI)
sleep (secs)
Session:request_stop (false, false, ARDOUR.TransportRequestSource.TRS_UI)
sleep (3)
print ("recorded", n, "tracks of", Session:transport_sample () / 48000, "s")
-- Disarmed, so that a trial's tracks monitor what they play from disk.
for t in tracks:iter () do
	t:rec_enable_control ():set_value (0, PBD.GroupControlDisposition.NoGroup)
end
Session:disable_record (false, false)
Session:save_state ("", false, false, false, false, false)
close_session ()
