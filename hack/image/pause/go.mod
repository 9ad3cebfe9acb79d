module mcs-cloudmap.local/pause

go 1.22
