-- phptune's private Tarantool: no WAL, 1 MiB readahead, a temporary memtx space {id unsigned, name string} with a
-- tree primary key on a sequence and 10,000 tuples. phptune fills in the work dir and the listen address.
local work_dir, listen = ...
box.cfg{wal_mode = 'none', readahead = 1048576, work_dir = work_dir, log_level = 5}
box.schema.user.grant('guest', 'read,write,execute', 'universe', nil, {if_not_exists = true})
local s = box.schema.space.create('bench', {id = 999, temporary = true, format = {
    {name = 'id', type = 'unsigned'}, {name = 'name', type = 'string'}}})
s:create_index('primary', {type = 'tree', parts = {'id'}, sequence = true})
local fiber = require('fiber')

-- Every iteration starts from the same data; Lua's GC stays stopped while it runs and collects after.
function phptune_begin()
    collectgarbage('restart')
    s:truncate()
    box.sequence.bench_seq:reset()
    for i = 1, 10000 do s:insert{i, 'tuple_' .. i} end
    box.sequence.bench_seq:set(10000)
    collectgarbage('collect')
    collectgarbage('stop')
    return true
end

function phptune_end()
    collectgarbage('restart')
    collectgarbage('collect')
    return true
end

function phptune_sleep(t)
    fiber.sleep(t)
    return true
end

phptune_begin()
phptune_end()
-- Listen last: a client that gets the greeting finds the space ready.
box.cfg{listen = listen}
