ardour {
	["type"]    = "dsp",
	name        = "trackbench dropout counter",
	category    = "Utility",
	license     = "MIT",
	author      = "trackbench",
	description = [[Counts the periods in which a track that played recorded noise went silent: the disk reader had nothing for it (an underrun). Pass-through; the counts are in shared memory: [1] periods seen after the first sound, [2] silent ones among them, [3] the first silent one.]]
}

function dsp_ioconfig ()
	return { [1] = { audio_in = 1, audio_out = 1 } }
end

function dsp_init (rate)
	self:shmem ():allocate (4)
	self:shmem ():clear ()
end

function dsp_runmap (bufs, in_map, out_map, n_samples, offset)
	local ib = in_map:get (ARDOUR.DataType ("audio"), 0)
	if ib == ARDOUR.ChanMapping.Invalid then return end
	local _, lo, hi = table.unpack (ARDOUR.DSP.peaks (bufs:get_audio (ib):data (offset), 0, 0, n_samples))
	local c = self:shmem ():to_int (0):array ()
	local silent = (lo == 0 and hi == 0)
	if c[1] == 0 and silent then return end
	c[1] = c[1] + 1
	if silent then
		c[2] = c[2] + 1
		if c[3] == 0 then c[3] = c[1] end
	end
end
