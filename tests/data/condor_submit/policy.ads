In = "/dev/null"
Cmd = "@CWD@/run.sh"
Err = "/dev/null"
Iwd = "@CWD@"
Out = "/dev/null"
Rank = 0.0
Owner = undefined
QDate = 1700000000
MyType = "Job"
ProcId = 0
JobPrio = 0
MaxHosts = 1
MinHosts = 1
NumCkpts = 0
Arguments = ""
ClusterId = 7
DiskUsage = 3
ImageSize = 3
JobStatus = 1
ExitStatus = 0
OnExitHold = ExitCode == 3
TargetType = "Machine"
TransferIn = false
Environment = ""
JobUniverse = 5
NumRestarts = 0
RequestCpus = 1
RequestDisk = DiskUsage
TransferErr = false
TransferOut = false
CurrentHosts = 0
ExitBySignal = false
NumJobStarts = 0
OnExitRemove = ExitCode == 0
PeriodicHold = NumJobStarts > 3
RemoteSysCpu = 0.0
Requirements = (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && ((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))
CommittedTime = 0
CondorVersion = "$CondorVersion: 24.0.24 2026-09-24 BuildID: UW_Python_Wheel_Build $"
RemoteUserCpu = 0.0
RequestMemory = ifthenelse(MemoryUsage =!= undefined,MemoryUsage,(ImageSize + 1023) / 1024)
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_8.10 $"
ExecutableSize = 3
NumSystemHolds = 0
PeriodicRemove = JobStatus == 5 && CurrentTime - EnteredCurrentStatus > 3600
JobNotification = 0
JobSubmitMethod = 2
LeaveJobInQueue = false
PeriodicRelease = HoldReasonCode == 3
FileSystemDomain = "@HOST@"
JobLeaseDuration = 2400
OnExitHoldReason = "bad exit"
TotalSuspensions = 0
CommittedSlotTime = 0
NumJobCompletions = 0
OnExitHoldSubCode = 3
CumulativeSlotTime = 0
LastSuspensionTime = 0
PeriodicHoldReason = "too many starts"
PeriodicHoldSubCode = 4
RemoteWallClockTime = 0.0
ShouldTransferFiles = "IF_NEEDED"
TransferInputSizeMB = 0
EnteredCurrentStatus = 1700000000
WhenToTransferOutput = "ON_EXIT"
CumulativeRemoteSysCpu = 0.0
CommittedSuspensionTime = 0
CumulativeRemoteUserCpu = 0.0
CumulativeSuspensionTime = 0

