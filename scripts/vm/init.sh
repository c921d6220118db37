#!/bin/sh
# PID 1 of the cnibench test VM (built into the initramfs by setup.sh).
# Loads the modules, mounts the host's / read-only over 9p with a tmpfs
# overlay on top (nothing the guest writes reaches the host), mounts the
# job folder read-write, runs /job/run.sh in that root, records its exit
# code in /job/rc and powers off.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
while read -r m; do insmod "/mods/$m" 2>/dev/null; done < /mods/order
opts=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o "$opts,ro,cache=loose" hostroot /lower || { echo "vm: cannot mount host root"; poweroff -f; }
mount -t tmpfs -o size=75% tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot
mkdir -p /newroot/job
mount -t 9p -o "$opts,cache=none" job /newroot/job
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
mount -t tmpfs tmpfs /newroot/run
# /tmp and /var/tmp stay as the overlay shows them (writable, throw-away):
# a checkout or test binary under /tmp on the host must stay visible.
mount -t cgroup2 cgroup2 /newroot/sys/fs/cgroup 2>/dev/null
mount -t bpf bpf /newroot/sys/fs/bpf 2>/dev/null
mount -t debugfs debugfs /newroot/sys/kernel/debug 2>/dev/null
chroot /newroot /bin/bash /job/run.sh </dev/null >/newroot/job/out 2>&1
echo $? > /newroot/job/rc
sync
umount /newroot/job
poweroff -f
