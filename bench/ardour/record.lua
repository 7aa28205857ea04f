-- Makes the session the playback check plays: `n` mono tracks that Ardour itself records for
-- `secs` seconds from the Dummy backend's white noise, in its native `format` (float or int24).
-- usage: luasession record.lua DIR N SECS FORMAT
local dir, n, secs, format = arg[1], tonumber (arg[2]), tonumber (arg[3]), arg[4]
local be = AudioEngine:set_backend ("None (Dummy)", "", "")
be:set_device_name ("Uniform White Noise")
be:set_sample_rate (48000)
be:set_buffer_size (1024)
assert (AudioEngine:start (false) == 0, "the Dummy backend did not start")
assert (create_session (dir, "trackbench", 48000), "could not create the session in " .. dir)
local formats = { float = ARDOUR.SampleFormat.Float, int24 = ARDOUR.SampleFormat.Int24 }
assert (formats[format], "format must be float or int24, not " .. tostring (format))
Session:cfg ():set_native_file_data_format (formats[format])
local tracks = Session:new_audio_track (1, 2, nil, n, "t", ARDOUR.PresentationInfo.max_order, ARDOUR.TrackMode.Normal, true, false)
assert (tracks:size () == n, "made " .. tracks:size () .. " tracks, not " .. n)
for t in tracks:iter () do
	t:rec_enable_control ():set_value (1, PBD.GroupControlDisposition.NoGroup)
end
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
